package swerex

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
)

// proc is one process, named by pid and start time, so a pid the kernel
// gave to another process since is never signalled.
type proc struct {
	pid   int
	start uint64
}

// procTree is a set of processes to end together.
type procTree []proc

// descendants lists the processes of the process group pgrp and all their
// descendants, wherever they moved (a new group, a new session): what a
// command's job started, which Ctrl-C to its group does not reach.
func descendants(pgrp int) procTree {
	type info struct {
		ppid, pgrp int
		start      uint64
	}
	all := map[int]info{}
	names, _ := os.ReadDir("/proc")
	for _, d := range names {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + d.Name() + "/stat")
		if err != nil {
			continue
		}
		f := statFields(stat)
		if len(f) < 20 {
			continue
		}
		// Fields after the name: state(3) ppid(4) pgrp(5) ... starttime(22).
		ppid, _ := strconv.Atoi(string(f[1]))
		pg, _ := strconv.Atoi(string(f[2]))
		start, _ := strconv.ParseUint(string(f[19]), 10, 64)
		all[pid] = info{ppid: ppid, pgrp: pg, start: start}
	}
	in := map[int]bool{}
	for pid, i := range all {
		if i.pgrp == pgrp {
			in[pid] = true
		}
	}
	for grew := true; grew; {
		grew = false
		for pid, i := range all {
			if !in[pid] && in[i.ppid] {
				in[pid] = true
				grew = true
			}
		}
	}
	out := make(procTree, 0, len(in))
	for pid := range in {
		out = append(out, proc{pid: pid, start: all[pid].start})
	}
	return out
}

// kill sends SIGKILL to every process of the tree that still runs.
func (t procTree) kill() {
	for _, p := range t {
		stat, err := os.ReadFile("/proc/" + strconv.Itoa(p.pid) + "/stat")
		if err != nil {
			continue
		}
		f := statFields(stat)
		if len(f) < 20 {
			continue
		}
		if start, _ := strconv.ParseUint(string(f[19]), 10, 64); start == p.start {
			_ = syscall.Kill(p.pid, syscall.SIGKILL)
		}
	}
}

// statFields splits /proc/<pid>/stat after the command name, which may
// hold spaces and parentheses: field 3 of proc(5) comes first.
func statFields(stat []byte) [][]byte {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return nil
	}
	return bytes.Fields(stat[i+1:])
}

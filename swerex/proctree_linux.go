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

// commandTree lists what a command started: the processes of its job (the
// process group pgrp; 0 for none) and all their descendants, wherever they
// moved (a new group, a new session), and every process of the terminal's
// session sid started since the tick since (its background jobs), except
// the shell, sid itself. Ctrl-C to the job's group reaches none but the
// first.
func commandTree(pgrp, sid int, since uint64) procTree {
	type info struct {
		ppid, pgrp, sid int
		start           uint64
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
		sess, _ := strconv.Atoi(string(f[3]))
		start, _ := strconv.ParseUint(string(f[19]), 10, 64)
		all[pid] = info{ppid: ppid, pgrp: pg, sid: sess, start: start}
	}
	in := map[int]bool{}
	for pid, i := range all {
		if (pgrp > 0 && i.pgrp == pgrp) || (sid > 0 && pid != sid && i.sid == sid && i.start >= since) {
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
		if pid != sid {
			out = append(out, proc{pid: pid, start: all[pid].start})
		}
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

// clockTicks returns the time since boot in the clock ticks of
// /proc/<pid>/stat's start time (USER_HZ, 100 on Linux), so a process's
// start can be compared with it; 0 when it cannot be read.
func clockTicks() uint64 {
	b, err := os.ReadFile("/proc/uptime")
	if err != nil {
		return 0
	}
	f := bytes.Fields(b)
	if len(f) == 0 {
		return 0
	}
	secs, err := strconv.ParseFloat(string(f[0]), 64)
	if err != nil {
		return 0
	}
	return uint64(secs * 100)
}

package server

import (
	"bufio"
	"bytes"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/actionserver/actionserver/api"
)

// clockTicks is USER_HZ, the unit of /proc times; it is 100 on every Linux.
const clockTicks = 100

type cpuSample struct {
	at    time.Time
	ticks int64 // user + system time of this process
}

func readCPUSample() cpuSample {
	s := cpuSample{at: time.Now()}
	stat, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return s
	}
	if i := bytes.LastIndexByte(stat, ')'); i >= 0 {
		f := strings.Fields(string(stat[i+1:]))
		// Fields 14 and 15 (utime, stime), counted from the state field (3).
		if len(f) > 12 {
			u, _ := strconv.ParseInt(f[11], 10, 64)
			st, _ := strconv.ParseInt(f[12], 10, 64)
			s.ticks = u + st
		}
	}
	return s
}

// resources measures the process. CPU is averaged since the previous call
// (upstream sleeps 0.1 s to sample; a status route must not block).
func (s *Server) resources() api.Resources {
	var r api.Resources
	cur := readCPUSample()
	s.cpuMu.Lock()
	prev := s.cpuLast
	s.cpuLast = cur
	s.cpuMu.Unlock()
	if wall := cur.at.Sub(prev.at).Seconds(); wall > 0 {
		r.CPUPercent = float64(cur.ticks-prev.ticks) / clockTicks / wall * 100
	}

	if statm, err := os.ReadFile("/proc/self/statm"); err == nil {
		f := strings.Fields(string(statm))
		if len(f) >= 2 {
			page := int64(os.Getpagesize())
			vms, _ := strconv.ParseInt(f[0], 10, 64)
			rss, _ := strconv.ParseInt(f[1], 10, 64)
			r.Memory.VMS, r.Memory.RSS = vms*page, rss*page
		}
	}
	if total := memTotal(); total > 0 {
		r.Memory.Percent = float64(r.Memory.RSS) / float64(total) * 100
	}

	var fs unix.Statfs_t
	if err := unix.Statfs("/", &fs); err == nil {
		bs := int64(fs.Frsize)
		r.Disk.Total = int64(fs.Blocks) * bs
		r.Disk.Free = int64(fs.Bavail) * bs
		r.Disk.Used = int64(fs.Blocks-fs.Bfree) * bs
		if d := r.Disk.Used + r.Disk.Free; d > 0 {
			r.Disk.Percent = float64(r.Disk.Used) / float64(d) * 100
		}
	}

	if f, err := os.Open("/proc/self/io"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			k, v, _ := strings.Cut(sc.Text(), ": ")
			n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			switch k {
			case "read_bytes":
				r.IO.ReadBytes = n
			case "write_bytes":
				r.IO.WriteBytes = n
			}
		}
		f.Close()
	}
	return r
}

func memTotal() int64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "MemTotal:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb * 1024
		}
	}
	return 0
}

func sinceSeconds(t time.Time) float64 { return time.Since(t).Seconds() }

// runtimeStats counts what a leak would grow: goroutines, open file
// descriptors and child processes.
func runtimeStats() api.RuntimeStats {
	st := api.RuntimeStats{Goroutines: runtime.NumGoroutine()}
	if fds, err := os.ReadDir("/proc/self/fd"); err == nil {
		st.OpenFDs = len(fds)
	}
	me := os.Getpid()
	procs, _ := os.ReadDir("/proc")
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			continue
		}
		if i := bytes.LastIndexByte(stat, ')'); i >= 0 {
			f := strings.Fields(string(stat[i+1:]))
			if len(f) > 1 && f[1] == strconv.Itoa(me) {
				st.Children++
			}
		}
	}
	return st
}

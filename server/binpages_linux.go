package server

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// releaseBinaryPages drops this process's mappings of the read-only parts
// of its own executable (code and constant data). Start-up touches most of
// a 20 MB binary: package initialisers, type and function tables. The
// kernel maps 64 KiB around each page touched, so those pages made up four
// fifths of the idle server's resident memory, though little of them is
// used again. They are clean copies of the file: dropping them loses
// nothing, they stay in the page cache (where the kernel can reclaim them
// more easily than mapped pages), and what is used again is mapped again
// by a minor fault. Writable mappings are never touched.
//
// It is done once, when start-up is over. Done at every idle period it
// would make the first action after each pause (every action, for an agent
// that thinks between them) pay those faults again: about a millisecond.
func releaseBinaryPages() {
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		return
	}
	f, err := os.Open("/proc/self/maps")
	if err != nil {
		return
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// start-end perms offset dev inode path
		fields := strings.Fields(sc.Text())
		if len(fields) < 6 || fields[5] != exe || strings.Contains(fields[1], "w") || !strings.HasPrefix(fields[1], "r") {
			continue
		}
		lo, hi, ok := strings.Cut(fields[0], "-")
		if !ok {
			continue
		}
		start, err1 := strconv.ParseUint(lo, 16, 64)
		end, err2 := strconv.ParseUint(hi, 16, 64)
		if err1 != nil || err2 != nil || end <= start {
			continue
		}
		_, _, _ = syscall.Syscall(syscall.SYS_MADVISE, uintptr(start), uintptr(end-start), syscall.MADV_DONTNEED)
	}
}

package shell

import (
	"path/filepath"
	"strings"
	"syscall"
)

// which finds name in the shell's PATH the way `which` does: the first
// regular file the shell's user may execute. Relative PATH entries (and
// empty ones, meaning ".") are taken from the shell's directory. It returns
// "" when there is none. uid and gids are the shell's user; uid 0 may run
// any file with an execute bit, as access(2) grants root.
//
// It runs at every prompt, before the command's completion is reported,
// so it stats into a local Stat_t: os.Stat would allocate a FileInfo for
// each directory of PATH.
func which(name, path, pwd string, uid int, gids []int) string {
	for rest, more := path, true; more; {
		var dir string
		dir, rest, more = strings.Cut(rest, ":")
		if dir == "" {
			dir = "."
		}
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(pwd, dir)
		}
		p := filepath.Join(dir, name)
		var st syscall.Stat_t
		if err := statNoEINTR(p, &st); err != nil || st.Mode&syscall.S_IFMT != syscall.S_IFREG {
			continue
		}
		if executableBy(&st, uid, gids) {
			return p
		}
	}
	return ""
}

// statNoEINTR is stat(2), retried when a signal interrupts it, as os.Stat
// does.
func statNoEINTR(path string, st *syscall.Stat_t) error {
	for {
		err := syscall.Stat(path, st)
		if err != syscall.EINTR {
			return err
		}
	}
}

func executableBy(st *syscall.Stat_t, uid int, gids []int) bool {
	mode := st.Mode & 0o777
	if uid == 0 {
		return mode&0o111 != 0
	}
	if int(st.Uid) == uid {
		return mode&0o100 != 0
	}
	for _, g := range gids {
		if int(st.Gid) == g {
			return mode&0o010 != 0
		}
	}
	return mode&0o001 != 0
}

package shell

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// which finds name in the shell's PATH the way `which` does: the first
// regular file the shell's user may execute. Relative PATH entries (and
// empty ones, meaning ".") are taken from the shell's directory. It returns
// "" when there is none. uid and gids are the shell's user; uid 0 may run
// any file with an execute bit, as access(2) grants root.
func which(name, path, pwd string, uid int, gids []int) string {
	for _, dir := range strings.Split(path, ":") {
		if dir == "" {
			dir = "."
		}
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(pwd, dir)
		}
		p := filepath.Join(dir, name)
		fi, err := os.Stat(p)
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		if executableBy(fi, uid, gids) {
			return p
		}
	}
	return ""
}

func executableBy(fi os.FileInfo, uid int, gids []int) bool {
	mode := fi.Mode().Perm()
	if uid == 0 {
		return mode&0o111 != 0
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
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

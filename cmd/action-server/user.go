package main

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// sandboxUser is the account the shell and plugins run as.
type sandboxUser struct {
	Name  string
	UID   int
	GID   int
	Home  string
	Shell string
	// Credential switches to the user; nil when it is the server's own.
	Credential *syscall.Credential
}

// setupUser finds the sandbox user, creating it with passwordless sudo when
// the server runs as root and it does not exist yet (as upstream does). With
// no name given, or the name of the server's own user, nothing changes.
func setupUser(name string, wantUID int, log *slog.Logger) (*sandboxUser, error) {
	me, err := currentUser(log)
	if err != nil {
		return nil, err
	}
	if name == "" || name == me.Username {
		return fromUser(me, false)
	}
	u, err := user.Lookup(name)
	if err != nil {
		var unknown user.UnknownUserError
		if !errors.As(err, &unknown) {
			return nil, fmt.Errorf("look up user %s: %w", name, err)
		}
		if os.Getuid() != 0 {
			log.Warn("cannot create the sandbox user without root; running as the current user",
				"user", name, "current", me.Username)
			return fromUser(me, false)
		}
		if wantUID < 0 {
			wantUID = 1000
		}
		if err := createUser(name, wantUID); err != nil {
			return nil, err
		}
		if u, err = user.Lookup(name); err != nil {
			return nil, fmt.Errorf("look up created user %s: %w", name, err)
		}
		log.Info("created sandbox user", "user", name, "uid", u.Uid)
	} else if wantUID >= 0 && u.Uid != strconv.Itoa(wantUID) {
		log.Info("sandbox user exists with another uid; keeping it", "user", name, "uid", u.Uid, "asked", wantUID)
	}
	if os.Getuid() != 0 {
		log.Warn("cannot switch to the sandbox user without root; running as the current user",
			"user", name, "current", me.Username)
		return fromUser(me, false)
	}
	return fromUser(u, true)
}

// currentUser is the account the server runs as. An arbitrary uid with no
// passwd entry, as OpenShift and `--user 10001` give, is an account too:
// os/user only knows it by $USER, which such a container usually lacks, so
// it gets its uid as its name and $HOME (or /) as its home.
func currentUser(log *slog.Logger) (*user.User, error) {
	uid, gid := strconv.Itoa(os.Getuid()), strconv.Itoa(os.Getgid())
	u, err := user.LookupId(uid)
	if err == nil {
		return u, nil
	}
	var unknown user.UnknownUserIdError
	if !errors.As(err, &unknown) {
		return nil, fmt.Errorf("look up the current user (uid %s): %w", uid, err)
	}
	u = &user.User{Uid: uid, Gid: gid, Username: os.Getenv("USER"), HomeDir: os.Getenv("HOME")}
	if u.Username == "" {
		u.Username = uid
	}
	if u.HomeDir == "" {
		u.HomeDir = "/"
	}
	log.Info("the server's uid has no passwd entry; using it as it is",
		"uid", uid, "gid", gid, "name", u.Username, "home", u.HomeDir)
	return u, nil
}

func fromUser(u *user.User, switchTo bool) (*sandboxUser, error) {
	uid, err := strconv.Atoi(u.Uid)
	if err != nil {
		return nil, fmt.Errorf("uid of %s: %w", u.Username, err)
	}
	gid, err := strconv.Atoi(u.Gid)
	if err != nil {
		return nil, fmt.Errorf("gid of %s: %w", u.Username, err)
	}
	su := &sandboxUser{Name: u.Username, UID: uid, GID: gid, Home: u.HomeDir, Shell: loginShell(u.Username)}
	if switchTo && uid != os.Getuid() {
		var groups []uint32
		if ids, err := u.GroupIds(); err == nil {
			for _, id := range ids {
				if g, err := strconv.ParseUint(id, 10, 32); err == nil {
					groups = append(groups, uint32(g))
				}
			}
		}
		su.Credential = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: groups}
	}
	return su, nil
}

// loginShell reads the user's shell from /etc/passwd (os/user does not
// expose it); bash when unknown.
func loginShell(name string) string {
	data, err := os.ReadFile("/etc/passwd")
	if err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			f := strings.Split(line, ":")
			if len(f) == 7 && f[0] == name && f[6] != "" {
				return f[6]
			}
		}
	}
	return "/bin/bash"
}

// createUser adds the user with a home directory, group root, membership of
// sudo (when that group exists) and passwordless sudo.
func createUser(name string, uid int) error {
	args := []string{"-rm", "-d", "/home/" + name, "-s", "/bin/bash", "-g", "root", "-u", strconv.Itoa(uid)}
	if _, err := user.LookupGroup("sudo"); err == nil {
		args = append(args, "-G", "sudo")
	}
	args = append(args, name)
	if out, err := exec.Command("useradd", args...).CombinedOutput(); err != nil {
		return fmt.Errorf("create user %s: %w: %s", name, err, strings.TrimSpace(string(out)))
	}
	return grantSudo(name)
}

// grantSudo gives the user passwordless sudo through a drop-in file, or
// the main sudoers file where there is no drop-in directory.
func grantSudo(name string) error {
	line := name + " ALL=(ALL) NOPASSWD:ALL\n"
	if fi, err := os.Stat("/etc/sudoers.d"); err == nil && fi.IsDir() {
		path := filepath.Join("/etc/sudoers.d", "action-server-"+name)
		if err := os.WriteFile(path, []byte(line), 0o440); err != nil {
			return fmt.Errorf("grant sudo to %s: %w", name, err)
		}
		return nil
	}
	if _, err := os.Stat("/etc/sudoers"); err != nil {
		return nil // no sudo in this image
	}
	f, err := os.OpenFile("/etc/sudoers", os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("grant sudo to %s: %w", name, err)
	}
	defer f.Close()
	if _, err := f.WriteString(line); err != nil {
		return fmt.Errorf("grant sudo to %s: %w", name, err)
	}
	return nil
}

// setupWorkDir creates the workspace and gives it to the sandbox user, its
// group able to write (umask 002, chown -R user:group, chmod g+rw).
func setupWorkDir(dir string, u *sandboxUser, group string) error {
	if err := os.MkdirAll(dir, 0o775); err != nil {
		return fmt.Errorf("create working directory: %w", err)
	}
	if os.Getuid() != 0 {
		return nil
	}
	gid := 0
	if group != "" && group != "root" {
		if n, err := strconv.Atoi(group); err == nil {
			gid = n
		} else if g, err := user.LookupGroup(group); err == nil {
			gid, _ = strconv.Atoi(g.Gid)
		}
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("working directory: %w", err)
	}
	// A large workspace already owned by the user is common after a
	// restart; walking it again only costs start-up time.
	if st := fi.Sys().(*syscall.Stat_t); int(st.Uid) != u.UID || int(st.Gid) != gid {
		err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			return os.Lchown(path, u.UID, gid)
		})
		if err != nil {
			return fmt.Errorf("chown working directory: %w", err)
		}
	}
	if err := os.Chmod(dir, fi.Mode().Perm()|0o060); err != nil {
		return fmt.Errorf("chmod working directory: %w", err)
	}
	return nil
}

// shellEnv is the shell's environment: the server's, without its secret or
// its own plumbing, with the user's identity (HOME, USER, LOGNAME, SHELL)
// set as a login via su would: always when the shell runs as another user,
// and where missing when it is the server's own.
func shellEnv(u *sandboxUser) []string {
	identity := map[string]string{"HOME": u.Home, "USER": u.Name, "LOGNAME": u.Name, "SHELL": u.Shell}
	var env []string
	seen := map[string]bool{}
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if serverOwnEnv[k] {
			continue
		}
		if _, ok := identity[k]; ok && u.Credential != nil {
			continue // replaced below
		}
		seen[k] = true
		env = append(env, kv)
	}
	for _, k := range []string{"HOME", "USER", "LOGNAME", "SHELL"} {
		if !seen[k] && identity[k] != "" {
			env = append(env, k+"="+identity[k])
		}
	}
	if !seen["TERM"] {
		env = append(env, "TERM=xterm-256color")
	}
	return env
}

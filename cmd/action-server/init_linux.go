package main

import (
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
)

// initChildEnv marks the server process that the PID-1 parent started.
const initChildEnv = "ACTION_SERVER_INIT_CHILD"

// runAsInit runs when the server is a container's PID 1. Every orphan in
// the container is re-parented to PID 1, and a process that never reaps
// them fills the process table with zombies. So PID 1 stays a tiny init: it
// starts the real server as its child, forwards signals to it, reaps every
// child that exits, and exits with the server's status. Keeping the two
// apart means the server's own exec.Cmd waits never race the reaper.
func runAsInit(args []string) int { return runAsInitNamed("", args) }

// runAsInitNamed is runAsInit for a server that must see argv[0] as name
// (the swerex-remote link); empty keeps the executable's path.
func runAsInitNamed(name string, args []string) int {
	self, err := os.Executable()
	if err != nil {
		self = "/proc/self/exe"
	}
	child := exec.Command(self, args...)
	if name != "" {
		child.Args[0] = name
	}
	child.Env = append(os.Environ(), initChildEnv+"=1")
	child.Stdin, child.Stdout, child.Stderr = os.Stdin, os.Stdout, os.Stderr
	if key := inheritedKeyPipe(); key != nil {
		// The API key's pipe goes to the server as its descriptor 3; this
		// init never reads it.
		child.ExtraFiles = []*os.File{key}
		child.Env = append(child.Env, keyFDEnv+"=3")
		defer key.Close()
	}

	sigs := make(chan os.Signal, 32)
	signal.Notify(sigs, syscall.SIGCHLD, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP,
		syscall.SIGQUIT, syscall.SIGUSR1, syscall.SIGUSR2)
	if err := child.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "action-server: start server: %v\n", err)
		return 1
	}
	pid := child.Process.Pid
	for sig := range sigs {
		if sig != syscall.SIGCHLD {
			_ = child.Process.Signal(sig)
			continue
		}
		for {
			var ws syscall.WaitStatus
			reaped, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
			if reaped <= 0 || err != nil {
				break
			}
			if reaped == pid {
				if ws.Signaled() {
					return 128 + int(ws.Signal())
				}
				return ws.ExitStatus()
			}
		}
	}
	return 0
}

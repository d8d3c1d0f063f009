package serverflags

import (
	"errors"
	"path/filepath"
	"slices"
)

// LauncherName is the program OpenHands' host runs to start its server in
// a runtime image: /openhands/micromamba/bin/micromamba. Runtime images
// made by `actionctl build` link that path to action-server, so the
// unmodified host starts this server instead.
const LauncherName = "micromamba"

// IsLauncher reports whether the binary was started under the launcher's
// name (argv[0]).
func IsLauncher(argv0 string) bool {
	return filepath.Base(argv0) == LauncherName
}

// FromLauncher turns the launcher command line the host sends,
//
//	run -n openhands poetry run python -u -m openhands.runtime.action_execution_server 30000 --working-dir /workspace ...
//
// into the server's own arguments: everything after the module name. The
// environment, poetry and Python words before it only mattered to the
// Python server; the host may override the module name, so any is taken.
func FromLauncher(args []string) ([]string, error) {
	if len(args) == 0 || args[0] != "run" {
		return nil, errors.New("only 'run ... python -m <server module> ARGS' is supported: this launcher starts the action server")
	}
	i := slices.Index(args, "-m")
	if i < 0 || i+1 >= len(args) {
		return nil, errors.New("no '-m <server module>' in the command line: this launcher starts the action server")
	}
	return args[i+2:], nil
}

package serverflags

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
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

// ServerArgs returns the server's own arguments from its command line,
// whichever of three forms started it:
//
//   - its own flags (the image's default command);
//   - the launcher's command line, with the binary started under the
//     launcher's name (the link in the image);
//   - the launcher's path followed by its command line, given to the
//     server as arguments. An engine that ignores the empty entrypoint the
//     host asks for (podman before 5.6) keeps the image's entrypoint, the
//     server, and appends the host's whole command to it.
func ServerArgs(argv0 string, args []string) ([]string, error) {
	if IsLauncher(argv0) {
		return FromLauncher(args)
	}
	// Only a path names the launcher here: a bare word in first place is
	// a port or a flag's value.
	if len(args) > 0 && strings.Contains(args[0], "/") && IsLauncher(args[0]) {
		return FromLauncher(args[1:])
	}
	return args, nil
}

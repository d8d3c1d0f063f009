// Package vscode is the "vscode" plugin: a VS Code server in the browser,
// run as the sandbox user on $VSCODE_PORT and guarded by a connection token
// that GET /vscode/connection_token hands to the host.
//
// Register it with
//
//	reg.Register(vscode.Name, vscode.New)
//
// and answer /vscode/connection_token from the started plugin:
//
//	p, ok := set.Get(vscode.Name)
//	tok, _ := p.(interface{ Token() *string }) // *vscode.Plugin
//	// tok.Token() is nil when VS Code was skipped
//
// New binds the server to 127.0.0.1; NewPlugin(Options{Host: "0.0.0.0"})
// binds it to every address, as upstream does, for a host that reaches it
// through a published container port.
//
// Which server runs: $VSCODE_SERVER_BIN when set (a path ending in .js is
// a VS Code server-main.js run with node; anything else is run like
// openvscode-server), otherwise openvscode-server where OpenHands' images
// put it (/openhands/.openvscode-server/bin/openvscode-server), otherwise
// the VS Code server inside the code-server package that scripts/deps.sh
// installs (/opt/code-server/lib/vscode/out/server-main.js).
//
// Start never fails the action server because VS Code cannot run here: it
// reports StateDisabled with the reason, and the token stays nil, when the
// sandbox user is not root, openhands or $RUNTIME_USERNAME, when
// VSCODE_PORT is missing or not a port, or when no server is installed.
// When the port is already taken the plugin is disabled too, but, as
// upstream does, the token has already been made and Token returns it.
// Start fails only when the server it launched dies or never answers
// before ctx ends.
//
// Variables are read from Env.Environ when the server set it, otherwise
// from the process environment: VSCODE_PORT, RUNTIME_USERNAME, RUNTIME_ID,
// RUNTIME_URL and OPENVSCODE_SERVER_BASE_PATH (the path the server is
// served under behind a path-routing proxy), WORKSPACE_BASE (where
// .vscode/settings.json goes) and WORKSPACE_MOUNT_PATH_IN_SANDBOX (the
// server's working directory); the last two default to Env.WorkDir.
//
// The workspace settings upstream writes are written only when the
// workspace has no .vscode/settings.json: a repository's own settings are
// worth more than a colour theme.
//
// Once ready, a server that exits is restarted with backoff (state
// restarting, then ready) until Stop, which ends its whole process group:
// the server forks helpers that would otherwise outlive it.
package vscode

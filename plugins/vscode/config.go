package vscode

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/actionserver/actionserver/plugins"
)

// Where VS Code servers are looked for when VSCODE_SERVER_BIN is not set,
// in this order.
const (
	// OpenVSCodeServer is where OpenHands' runtime images install
	// openvscode-server.
	OpenVSCodeServer = "/openhands/.openvscode-server/bin/openvscode-server"
	// CodeServerMain is the VS Code server inside the code-server package
	// as scripts/deps.sh installs it.
	CodeServerMain = "/opt/code-server/lib/vscode/out/server-main.js"
	// ServerBinEnv names a VS Code server to use instead of looking.
	ServerBinEnv = "VSCODE_SERVER_BIN"
)

// lookup reads a variable the way every plugin setting is read: from the
// environment the server gives plugin processes when it set one, so that
// what the plugin decides and what its child sees agree, else from the
// process environment.
type lookup []string

func (l lookup) get(key string) string {
	if l == nil {
		return os.Getenv(key)
	}
	for i := len(l) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(l[i], "="); ok && k == key {
			return v
		}
	}
	return ""
}

// userAllowed is upstream's rule: VS Code runs only for the users its
// images create, or the one the runtime names.
func userAllowed(name string, env lookup) bool {
	return name == "root" || name == "openhands" || (name != "" && name == env.get("RUNTIME_USERNAME"))
}

// parsePort reads VSCODE_PORT.
func parsePort(env lookup) (int, error) {
	v := env.get("VSCODE_PORT")
	if v == "" {
		return 0, errors.New("VSCODE_PORT is not set")
	}
	port, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || port < 1 || port > 65535 {
		return 0, fmt.Errorf("VSCODE_PORT=%q is not a port", v)
	}
	return port, nil
}

// server is a VS Code server found on this machine.
type server struct {
	path string
	// node runs path when it is a server-main.js; empty for an
	// executable in openvscode-server's style.
	node string
}

// findServer picks the server to run: the override when set, otherwise the
// first of candidates that exists.
func findServer(env lookup, candidates []string) (server, error) {
	paths := candidates
	if bin := env.get(ServerBinEnv); bin != "" {
		paths = []string{bin}
	}
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil || fi.IsDir() {
			continue
		}
		if !strings.HasSuffix(p, ".js") {
			return server{path: p}, nil
		}
		node, err := exec.LookPath("node")
		if err != nil {
			return server{}, fmt.Errorf("VS Code server %s needs node, which is not on PATH", p)
		}
		return server{path: p, node: node}, nil
	}
	if len(paths) == 1 && env.get(ServerBinEnv) != "" {
		return server{}, fmt.Errorf("no VS Code server at %s (%s)", paths[0], ServerBinEnv)
	}
	return server{}, fmt.Errorf("no VS Code server installed (looked for %s)", strings.Join(paths, ", "))
}

// argv is the command line that serves VS Code on host:port behind token.
// openvscode-server takes upstream's flags; the VS Code server inside
// code-server also wants its license terms accepted and a data directory,
// which would otherwise land under the server's install directory.
func (s server) argv(host string, port int, token, basePath, dataDir string) []string {
	var args []string
	if s.node == "" {
		args = []string{s.path, "--host", host, "--connection-token", token, "--port", strconv.Itoa(port),
			"--disable-workspace-trust"}
	} else {
		args = []string{s.node, s.path, "--host", host, "--port", strconv.Itoa(port), "--connection-token", token,
			"--accept-server-license-terms", "--server-data-dir", dataDir, "--disable-workspace-trust"}
	}
	if basePath != "" {
		args = append(args, "--server-base-path", basePath)
	}
	return args
}

// basePath is the path VS Code is served under when the host reaches the
// sandbox through a path-routing proxy: OPENVSCODE_SERVER_BASE_PATH when
// set, else /<RUNTIME_ID>/vscode when RUNTIME_URL's path starts with
// /<RUNTIME_ID>, else none.
func basePath(env lookup) string {
	if b := env.get("OPENVSCODE_SERVER_BASE_PATH"); b != "" {
		return strings.TrimRight("/"+strings.TrimLeft(b, "/"), "/")
	}
	id, raw := env.get("RUNTIME_ID"), env.get("RUNTIME_URL")
	if id == "" || raw == "" {
		return ""
	}
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	p := u.Path
	if p == "" {
		p = "/"
	}
	if strings.HasPrefix(p, "/"+id) {
		return "/" + id + "/vscode"
	}
	return ""
}

// settings are the workspace settings upstream writes, in its key order
// and indentation. (A literal: marshalling them at package initialisation
// cost every start 0.05 ms.)
var settings = []byte(`{
    "workbench.colorTheme": "Default Dark Modern",
    "workbench.startupEditor": "none",
    "chat.commandCenter.enabled": false
}
`)

// writeSettings gives dir/.vscode/settings.json upstream's settings,
// readable and writable by everyone as upstream leaves it, unless the
// file exists. A .vscode directory it makes is given to the sandbox user.
func writeSettings(dir string, cred credential) (string, error) {
	vdir := filepath.Join(dir, ".vscode")
	path := filepath.Join(vdir, "settings.json")
	if _, err := os.Stat(vdir); errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(vdir, 0o755); err != nil {
			return path, fmt.Errorf("vscode settings: %w", err)
		}
		cred.chown(vdir)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
	if errors.Is(err, fs.ErrExist) {
		return path, nil
	}
	if err != nil {
		return path, fmt.Errorf("vscode settings: %w", err)
	}
	_, err = f.Write(settings)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		// The umask would otherwise take the group and world write bits.
		err = os.Chmod(path, 0o666)
	}
	if err != nil {
		return path, fmt.Errorf("vscode settings: %w", err)
	}
	return path, nil
}

// credential is who the server runs as.
type credential struct {
	uid, gid int
	set      bool // false: as the action server's own user
}

// chown gives path to the sandbox user when the server runs as another
// user; a failure only means the user cannot edit it.
func (c credential) chown(path string) {
	if c.set && os.Geteuid() == 0 {
		_ = os.Lchown(path, c.uid, c.gid)
	}
}

// homeOf is the sandbox user's home: Env.Home, else the account's, else
// the action server's own when it runs as itself.
func homeOf(env plugins.Env) string {
	if env.Home != "" {
		return env.Home
	}
	if u, err := user.Lookup(env.Username); err == nil && u.HomeDir != "" {
		return u.HomeDir
	}
	if env.Credential == nil {
		if h, err := os.UserHomeDir(); err == nil {
			return h
		}
	}
	// Nowhere of the user's own: keep the server's data out of the
	// workspace, where a relative path would put it.
	return filepath.Join(os.TempDir(), "vscode-home-"+strconv.Itoa(os.Getpid()))
}

// currentUser is the action server's own user name, the sandbox user
// when the server was given none.
func currentUser() string {
	if u, err := user.Current(); err == nil {
		return u.Username
	}
	return ""
}

// newToken returns a random version 4 UUID, the form upstream's token has.
func newToken() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on Linux
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

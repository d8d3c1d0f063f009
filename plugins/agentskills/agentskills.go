// Package agentskills is the "agent_skills" plugin: Python helpers for the
// IPython kernel (open_file, goto_line, scroll_down, scroll_up, search_dir,
// search_file, find_file, parse_pdf, parse_docx, parse_latex, parse_pptx,
// file_editor). The module is embedded in the binary and written to a
// directory of the sandbox user's at start; the server runs ImportCell in
// every kernel when jupyter is loaded too.
package agentskills

import (
	"context"
	"embed"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"

	"github.com/actionserver/actionserver/plugins"
)

// Name is the plugin's name.
const Name = "agent_skills"

// importLine is upstream's import of the helpers; the module is laid out
// so that it works unchanged.
const importLine = "from openhands.runtime.plugins.agent_skills.agentskills import *"

//go:embed all:python
var module embed.FS

// Plugin writes the helpers where the kernel can import them.
type Plugin struct {
	mu     sync.Mutex
	dir    string
	status plugins.Status
}

// New returns the plugin, not started.
func New() plugins.Plugin {
	return &Plugin{status: plugins.Status{Name: Name, State: plugins.StateStarting}}
}

// Name implements plugins.Plugin.
func (p *Plugin) Name() string { return Name }

// Status implements plugins.Plugin.
func (p *Plugin) Status() plugins.Status {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.status
}

// Start writes the module, its configuration (where the server's binary
// is, for file_editor, and where the editor keeps its undo history) and an
// empty history directory, all owned by the sandbox user.
func (p *Plugin) Start(ctx context.Context, env plugins.Env) error {
	dir, err := p.install(env)
	p.mu.Lock()
	defer p.mu.Unlock()
	if err != nil {
		p.status.State, p.status.Error = plugins.StateFailed, err.Error()
		return err
	}
	p.dir, p.status.State = dir, plugins.StateReady
	return nil
}

func (p *Plugin) install(env plugins.Env) (dir string, err error) {
	bin, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("find the server's binary: %w", err)
	}
	dir, err = os.MkdirTemp("", "agent-skills-")
	if err != nil {
		return "", err
	}
	defer func() {
		if err != nil {
			os.RemoveAll(dir)
		}
	}()
	uid, gid := -1, -1
	if env.Credential != nil {
		uid, gid = int(env.Credential.Uid), int(env.Credential.Gid)
	}
	chown := func(path string) error {
		if uid < 0 {
			return nil
		}
		return os.Lchown(path, uid, gid)
	}
	if err := chown(dir); err != nil {
		return "", err
	}
	root, err := fs.Sub(module, "python")
	if err != nil {
		return "", err
	}
	err = fs.WalkDir(root, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || path == "." {
			return err
		}
		target := filepath.Join(dir, path)
		if d.IsDir() {
			if err := os.Mkdir(target, 0o700); err != nil {
				return err
			}
			return chown(target)
		}
		data, err := fs.ReadFile(root, path)
		if err != nil {
			return err
		}
		if err := os.WriteFile(target, data, 0o600); err != nil {
			return err
		}
		return chown(target)
	})
	if err != nil {
		return "", fmt.Errorf("write the agent skills module: %w", err)
	}
	if bin, err = reachableBinary(bin, dir, env, chown); err != nil {
		return "", err
	}
	history := filepath.Join(dir, "history")
	if err := os.Mkdir(history, 0o700); err != nil {
		return "", err
	}
	if err := chown(history); err != nil {
		return "", err
	}
	cfg, _ := json.Marshal(map[string]string{"binary": bin, "history": history})
	cfgPath := filepath.Join(dir, "openhands", "runtime", "plugins", "agent_skills", "config.json")
	if err := os.WriteFile(cfgPath, cfg, 0o600); err != nil {
		return "", err
	}
	return dir, chown(cfgPath)
}

// ImportCell is the kernel cell that makes the helpers available as
// globals.
func (p *Plugin) ImportCell() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	q, _ := json.Marshal(p.dir)
	return "import sys\nif " + string(q) + " not in sys.path:\n    sys.path.insert(0, " + string(q) + ")\n" + importLine + "\n"
}

// Stop removes the module and the editor's history.
func (p *Plugin) Stop(context.Context) error {
	p.mu.Lock()
	dir := p.dir
	p.dir = ""
	p.mu.Unlock()
	if dir == "" {
		return nil
	}
	return os.RemoveAll(dir)
}

// reachableBinary returns a path of the server's binary that the sandbox
// user can run: the binary itself when it can (an image installs it world
// executable), else a copy in dir, the user's.
func reachableBinary(bin, dir string, env plugins.Env, chown func(string) error) (string, error) {
	probe := exec.Command(bin, "--version")
	probe.SysProcAttr = &syscall.SysProcAttr{Credential: env.Credential}
	if probe.Run() == nil {
		return bin, nil
	}
	copyPath := filepath.Join(dir, "action-server")
	src, err := os.Open(bin)
	if err != nil {
		return "", fmt.Errorf("copy the server's binary for the kernel: %w", err)
	}
	defer src.Close()
	dst, err := os.OpenFile(copyPath, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o700)
	if err != nil {
		return "", fmt.Errorf("copy the server's binary for the kernel: %w", err)
	}
	_, err = io.Copy(dst, src)
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = chown(copyPath)
	}
	if err != nil {
		return "", fmt.Errorf("copy the server's binary for the kernel: %w", err)
	}
	return copyPath, nil
}

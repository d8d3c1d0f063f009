package agentskills_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/actionserver/actionserver/plugins"
	"github.com/actionserver/actionserver/plugins/agentskills"
	"github.com/actionserver/actionserver/plugins/jupyter"
)

// kernel is a real Jupyter kernel with the helpers imported, as the server
// sets it up when both plugins are loaded.
type kernel struct {
	jp     *jupyter.Plugin
	skills *agentskills.Plugin
	cwd    string
}

// baseEnv fills what a test leaves empty.
func baseEnv(t *testing.T, env plugins.Env) plugins.Env {
	t.Helper()
	if env.WorkDir == "" {
		env.WorkDir = t.TempDir()
	}
	if env.Environ == nil {
		env.Environ = []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + t.TempDir(), "LANG=C.UTF-8"}
	}
	if env.Logger == nil {
		env.Logger = slog.New(slog.DiscardHandler)
	}
	return env
}

// startSkills starts the agent_skills plugin and stops it when the test ends.
func startSkills(t *testing.T, env plugins.Env) *agentskills.Plugin {
	t.Helper()
	p := agentskills.New().(*agentskills.Plugin)
	require.NoError(t, p.Start(context.Background(), baseEnv(t, env)))
	t.Cleanup(func() { p.Stop(context.Background()) })
	return p
}

// startKernel starts both plugins and imports the helpers into the kernel.
func startKernel(t *testing.T, env plugins.Env) *kernel {
	t.Helper()
	env = baseEnv(t, env)
	skills := startSkills(t, env)
	jp := jupyter.New().(*jupyter.Plugin)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	require.NoError(t, jp.Start(ctx, env), "start jupyter (scripts/deps.sh installs it)")
	t.Cleanup(func() { jp.Stop(context.Background()) })
	require.NoError(t, jp.AddInitCell(ctx, skills.ImportCell()))
	return &kernel{jp: jp, skills: skills, cwd: env.WorkDir}
}

// run runs one cell in the kernel's working directory and returns what the
// agent would read.
func (k *kernel) run(t *testing.T, code string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	timeout := 30.0
	r, err := k.jp.RunCell(ctx, jupyter.Cell{Code: code, Cwd: k.cwd, Timeout: &timeout})
	require.NoError(t, err)
	return r.Content
}

// py quotes s as a Python string literal.
func py(s string) string {
	var b strings.Builder
	b.WriteByte('\'')
	for _, r := range s {
		switch {
		case r == '\\' || r == '\'':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r < 0x20:
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('\'')
	return b.String()
}

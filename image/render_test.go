package image

import (
	"slices"
	"strings"
	"testing"

	"github.com/moby/buildkit/frontend/dockerfile/instructions"
	"github.com/moby/buildkit/frontend/dockerfile/parser"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// parseDockerfile parses with BuildKit's own parser, as docker buildx
// would, and returns the one stage.
func parseDockerfile(t *testing.T, text string) instructions.Stage {
	t.Helper()
	ast, err := parser.Parse(strings.NewReader(text))
	require.NoError(t, err, text)
	require.Empty(t, ast.Warnings, text)
	stages, _, err := instructions.Parse(ast.AST, nil)
	require.NoError(t, err, text)
	require.Len(t, stages, 1, text)
	return stages[0]
}

// runs returns the shell text of every RUN and the sources of every COPY.
func runsAndCopies(st instructions.Stage) (runs []string, copies []string) {
	for _, c := range st.Commands {
		switch c := c.(type) {
		case *instructions.RunCommand:
			runs = append(runs, strings.Join(c.CmdLine, " "))
		case *instructions.CopyCommand:
			copies = append(copies, strings.Join(c.SourcePaths, " ")+" -> "+c.DestPath)
		}
	}
	return runs, copies
}

func entrypointAndCmd(t *testing.T, st instructions.Stage) ([]string, []string) {
	t.Helper()
	var ep, cmd []string
	for _, c := range st.Commands {
		switch c := c.(type) {
		case *instructions.EntrypointCommand:
			require.False(t, c.PrependShell, "ENTRYPOINT must be in exec form")
			ep = c.CmdLine
		case *instructions.CmdCommand:
			require.False(t, c.PrependShell, "CMD must be in exec form")
			cmd = c.CmdLine
		}
	}
	return ep, cmd
}

func TestRender_EveryFeatureCombinationParses(t *testing.T) {
	plugins := [][]string{nil, {"jupyter"}, {"agent_skills", "jupyter"}, {"vscode"}, {"agent_skills", "jupyter", "vscode"}}
	for _, browser := range []bool{false, true} {
		for _, pl := range plugins {
			for _, user := range []string{"openhands", "root"} {
				for _, path := range []Path{PathScratch, PathVersioned, PathLock} {
					o := Options{BaseImage: "debian:bookworm", Version: "1.0", Browser: browser, Plugins: pl, User: user, ExtraDeps: "echo extra"}
					name := strings.Join([]string{string(path), user, strings.Join(pl, "+"), map[bool]string{true: "browser", false: "nobrowser"}[browser]}, "/")
					t.Run(name, func(t *testing.T) {
						text, err := Render(o, path, "from-image:tag")
						require.NoError(t, err)
						st := parseDockerfile(t, text)
						assert.Equal(t, "from-image:tag", st.BaseName)

						ep, cmd := entrypointAndCmd(t, st)
						assert.Equal(t, []string{"/openhands/bin/action-server"}, ep)
						assert.Equal(t, o.serverArgs(), cmd)

						runs, copies := runsAndCopies(st)
						all := strings.Join(runs, "\n")
						assert.Contains(t, copies, "action-server -> /openhands/bin/action-server")
						if path == PathLock {
							assert.Empty(t, runs, "the lock path only copies the binary")
							assert.Len(t, copies, 1)
							return
						}
						assert.Equal(t, browser, strings.Contains(all, " chromium"), "chromium only with the browser")
						assert.Equal(t, browser, strings.Contains(all, " libjs-pdf"), "pdf.js for the file viewer only with the browser")
						hasJupyter := slices.Contains(pl, "jupyter")
						assert.Equal(t, hasJupyter, strings.Contains(all, " jupyter-server "), "jupyter packages only with jupyter")
						assert.Equal(t, hasJupyter, strings.Contains(all, " python3-ipykernel"), "jupyter packages only with jupyter")
						assert.Equal(t, path == PathScratch, strings.Contains(all, "bash ca-certificates git sudo"), "base packages on the scratch path")
						hasVSCode := slices.Contains(pl, "vscode")
						assert.Equal(t, hasVSCode, strings.Contains(strings.Join(copies, "\n"), "install-code-server.sh"), "code-server only with vscode")
						assert.Equal(t, user != "root", strings.Contains(all, "useradd -m -s /bin/bash -u 1000 -U -G sudo openhands"))
						assert.Contains(t, all, "ln -sf /openhands/bin/action-server /openhands/micromamba/bin/micromamba")
						assert.Contains(t, all, "ln -sf /openhands/bin/action-server /usr/local/bin/swerex-remote", "SWE-agent finds swerex-remote on PATH")
						assert.Contains(t, all, "echo extra")
					})
				}
			}
		}
	}
}

func TestRender_DefaultCommandFollowsTheFeatures(t *testing.T) {
	tests := []struct {
		o    Options
		want []string
	}{
		{Options{}, []string{"8000", "--working-dir", "/workspace", "--username", "openhands", "--user-id", "1000", "--no-enable-browser"}},
		{Options{Browser: true, Plugins: []string{"agent_skills", "jupyter"}},
			[]string{"8000", "--working-dir", "/workspace", "--username", "openhands", "--user-id", "1000", "--plugins", "agent_skills", "jupyter"}},
		{Options{Browser: true, User: "root"}, []string{"8000", "--working-dir", "/workspace", "--username", "root", "--user-id", "0"}},
		{Options{Browser: true, User: "dev", UID: 1500}, []string{"8000", "--working-dir", "/workspace", "--username", "dev", "--user-id", "1500"}},
	}
	for _, tt := range tests {
		tt.o.BaseImage, tt.o.Version = "debian:12", "1"
		text, err := Render(tt.o, PathScratch, "debian:12")
		require.NoError(t, err)
		_, cmd := entrypointAndCmd(t, parseDockerfile(t, text))
		assert.Equal(t, tt.want, cmd)
	}
}

func TestRender_RefusesWhatItCannotBuild(t *testing.T) {
	tests := []struct {
		name string
		o    Options
		want string
	}{
		{"alpine", Options{BaseImage: "alpine:3.20"}, "base image alpine:3.20 is not of the Debian/Ubuntu family"},
		{"alpine tag", Options{BaseImage: "python:3.12-alpine"}, "base image python:3.12-alpine is not of the Debian/Ubuntu family"},
		{"fedora", Options{BaseImage: "registry.fedoraproject.org/fedora:40"}, "not of the Debian/Ubuntu family"},
		{"ubi", Options{BaseImage: "registry.access.redhat.com/ubi9/ubi-minimal"}, "not of the Debian/Ubuntu family"},
		{"scratch", Options{BaseImage: "scratch"}, "not of the Debian/Ubuntu family"},
		{"no base", Options{}, "no base image"},
		{"unknown plugin", Options{BaseImage: "debian", Plugins: []string{"emacs"}}, "Plugin emacs not found"},
		{"agent_skills alone", Options{BaseImage: "debian", Plugins: []string{"agent_skills"}}, "agent_skills needs jupyter"},
		{"bad user", Options{BaseImage: "debian", User: "Bad User"}, `user "Bad User": not a valid user name`},
		{"no uid for a user means 1000", Options{BaseImage: "debian", User: "dev", UID: 0}, ""},
		{"multi-line extra", Options{BaseImage: "debian", ExtraDeps: "a\nb"}, "one line only"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.o.Version = "1"
			_, err := Render(tt.o, PathScratch, "x")
			if tt.want == "" {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
	for _, ok := range []string{"debian:bookworm", "ubuntu:24.04", "python:3.12-slim", "nikolaik/python-nodejs:python3.12-nodejs22", "node:22", "localhost/debian-mini:bookworm", "golang:1.26"} {
		_, err := Render(Options{BaseImage: ok, Version: "1"}, PathScratch, ok)
		assert.NoError(t, err, ok)
	}
}

func TestRender_TheBuildChecksForAptToo(t *testing.T) {
	// A base the name check lets through still stops at the first RUN with
	// a message naming it.
	text, err := Render(Options{BaseImage: "example/custom:1", Version: "1"}, PathScratch, "example/custom:1")
	require.NoError(t, err)
	assert.Contains(t, text, `base image example/custom:1 is not of the Debian/Ubuntu family (no apt-get)`)
}

func TestRender_AgentToolsAreInByDefaultAndCanBeLeftOut(t *testing.T) {
	for _, tc := range []struct {
		name    string
		noTools bool
		want    bool
	}{
		{"by default", false, true},
		{"left out", true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := Options{BaseImage: "debian:12", Version: "1", NoAgentTools: tc.noTools}
			text, err := Render(o, PathScratch, "debian:12")
			require.NoError(t, err)
			for _, pkg := range []string{"python-is-python3", "ripgrep", "curl", "procps", "build-essential"} {
				assert.Equal(t, tc.want, strings.Contains(text, " "+pkg), "%s in the Dockerfile", pkg)
			}
		})
	}
}

package acceptance

import (
	"archive/zip"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Ports of the server-facing part of tests/runtime/test_microagent.py:
// the host's get_microagents_from_selected_repo, which reads the legacy
// .openhands_instructions, lists <repo>/.openhands/microagents with
// /list_files and fetches it as a zip with /download_files. Upstream's
// test files are in the mounted workspace before the runtime starts; here
// copy_to puts the same bytes in the sandbox (a write action would add a
// newline to each).
//
// Parsing a microagent's front matter into a KnowledgeMicroagent or a
// RepoMicroagent is the host's own Python. What depends on the server is
// the listing, the zip's layout (a microagent's name is its path in the
// zip without ".md") and the files' bytes; with those right the host
// parses what was written. The type is taken from the "type:" line of
// the front matter only to check upstream's counts.

const knowledgeAgent = `---
name: test_knowledge_agent
type: knowledge
version: 1.0.0
agent: CodeActAgent
triggers:
  - test
  - pytest
---

# Test Guidelines

Testing best practices and guidelines.
`

const repoAgent = `---
name: test_repo_agent
type: repo
version: 1.0.0
agent: CodeActAgent
---

# Test Repository Agent

Repository-specific test instructions.
`

const legacyInstructions = `# Legacy Instructions

These are legacy repository instructions.
`

// microagent is what the tests look at of a loaded microagent.
type microagent struct {
	name, kind, content string
}

// createTestMicroagents is the suite's _create_test_microagents, in the
// sandbox directory dir.
func createTestMicroagents(t *testing.T, rt *runtime, dir string) {
	t.Helper()
	putFile(t, rt, path.Join(dir, ".openhands/microagents/knowledge/knowledge.md"), knowledgeAgent)
	putFile(t, rt, path.Join(dir, ".openhands/microagents/repo.md"), repoAgent)
	putFile(t, rt, path.Join(dir, ".openhands_instructions"), legacyInstructions)
}

// putFile makes the sandbox file p hold content: a host file of that name
// copied with copy_to into p's directory, which copy_to creates.
func putFile(t *testing.T, rt *runtime, p, content string) {
	t.Helper()
	host := filepath.Join(t.TempDir(), path.Base(p))
	require.NoError(t, os.WriteFile(host, []byte(content), 0o644))
	require.NoError(t, rt.copyTo(host, path.Dir(p), false))
}

// getMicroagentsFromSelectedRepo is the host's function of that name
// without its first step, the org-level repository (<org>/.openhands),
// which needs a git provider to find and clone it.
func (r *runtime) getMicroagentsFromSelectedRepo(selectedRepository string) []microagent {
	r.t.Helper()
	t := r.t
	ws := r.workspace()
	microagentsDir := path.Join(ws, ".openhands", "microagents")
	repoRoot := ""
	if selectedRepository != "" {
		parts := strings.Split(selectedRepository, "/")
		repoRoot = path.Join(ws, parts[len(parts)-1])
		microagentsDir = path.Join(repoRoot, ".openhands", "microagents")
	}

	var loaded []microagent
	obs := r.read(path.Join(ws, ".openhands_instructions"))
	if obs.Kind == "error" && repoRoot != "" {
		obs = r.read(path.Join(repoRoot, ".openhands_instructions"))
	}
	if obs.Kind == "read" {
		loaded = append(loaded, microagent{name: "repo_legacy", kind: "repo", content: obs.Content})
	}

	// _load_microagents_from_directory
	files := r.listFiles(microagentsDir)
	if len(files) == 0 {
		return loaded
	}
	zipPath, err := r.copyFrom(microagentsDir)
	require.NoError(t, err)
	zr, err := zip.OpenReader(zipPath)
	// The host logs a zip it cannot read and loads nothing from it; a
	// test expecting agents then fails on its counts. Failing here says
	// why.
	require.NoError(t, err, "the download of %s should be a zip", microagentsDir)
	defer zr.Close()
	defer os.Remove(zipPath)
	for _, f := range zr.File {
		if strings.HasSuffix(f.Name, "/") || path.Ext(f.Name) != ".md" || path.Base(f.Name) == "README.md" {
			continue
		}
		rc, err := f.Open()
		require.NoError(t, err, f.Name)
		data, err := io.ReadAll(rc)
		rc.Close()
		require.NoError(t, err, f.Name)
		assert.False(t, filepath.IsAbs(f.Name) || slices.Contains(strings.Split(f.Name, "/"), ".."),
			"zip entry %q should be relative to %s", f.Name, microagentsDir)
		loaded = append(loaded, microagent{
			name:    strings.TrimSuffix(f.Name, ".md"),
			kind:    frontMatterType(string(data)),
			content: string(data),
		})
	}
	return loaded
}

// frontMatterType is the "type:" of a microagent's front matter; "" when
// there is none.
func frontMatterType(content string) string {
	lines := strings.Split(content, "\n")
	if len(lines) == 0 || lines[0] != "---" {
		return ""
	}
	for _, l := range lines[1:] {
		if l == "---" {
			break
		}
		if v, ok := strings.CutPrefix(l, "type:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

func ofKind(agents []microagent, kind string) []microagent {
	var out []microagent
	for _, a := range agents {
		if a.kind == kind {
			out = append(out, a)
		}
	}
	return out
}

func agentNames(agents []microagent) []string {
	var out []string
	for _, a := range agents {
		out = append(out, a.name)
	}
	return out
}

// checkTestMicroagentsLoaded holds upstream's checks after
// _create_test_microagents, and this port's on what the zip carried.
func checkTestMicroagentsLoaded(t *testing.T, loaded []microagent) {
	t.Helper()
	knowledge := ofKind(loaded, "knowledge")
	require.Len(t, knowledge, 1, "knowledge agents: %v", agentNames(loaded))
	assert.Equal(t, "knowledge/knowledge", knowledge[0].name)
	assert.Equal(t, knowledgeAgent, knowledge[0].content, "triggers test and pytest, as written")

	repo := ofKind(loaded, "repo")
	assert.Len(t, repo, 2, "repo.md and .openhands_instructions: %v", agentNames(loaded))
	assert.ElementsMatch(t, []string{"repo", "repo_legacy"}, agentNames(repo))
	for _, a := range repo {
		want := map[string]string{"repo": repoAgent, "repo_legacy": legacyInstructions}[a.name]
		assert.Equal(t, want, a.content, a.name)
	}
}

// test_load_microagents_with_trailing_slashes
func TestLoadMicroagents_FromTheWorkspace(t *testing.T) {
	eachUser(t, func(t *testing.T, v variant) {
		rt := loadRuntime(t, v, runtimeOpts{})
		createTestMicroagents(t, rt, rt.workspace())

		// This port's: the listing the host checks for emptiness,
		// directories first with a slash.
		assert.Equal(t, []string{"knowledge/", "repo.md"}, rt.listFiles(path.Join(rt.workspace(), ".openhands", "microagents")))

		checkTestMicroagentsLoaded(t, rt.getMicroagentsFromSelectedRepo(""))
	})
}

// test_load_microagents_with_selected_repo. The org-level repository
// (OpenHands/.openhands) is not looked for: see
// getMicroagentsFromSelectedRepo.
func TestLoadMicroagents_FromTheSelectedRepo(t *testing.T) {
	eachUser(t, func(t *testing.T, v variant) {
		rt := loadRuntime(t, v, runtimeOpts{})
		createTestMicroagents(t, rt, path.Join(rt.workspace(), "OpenHands"))

		checkTestMicroagentsLoaded(t, rt.getMicroagentsFromSelectedRepo("OpenHands/OpenHands"))
	})
}

// test_load_microagents_with_missing_files
func TestLoadMicroagents_WithMissingFiles(t *testing.T) {
	eachUser(t, func(t *testing.T, v variant) {
		rt := loadRuntime(t, v, runtimeOpts{})
		putFile(t, rt, path.Join(rt.workspace(), ".openhands", "microagents", "repo.md"), repoAgent)

		loaded := rt.getMicroagentsFromSelectedRepo("")

		assert.Empty(t, ofKind(loaded, "knowledge"), agentNames(loaded))
		repo := ofKind(loaded, "repo")
		require.Len(t, repo, 1, agentNames(loaded))
		assert.Equal(t, "repo", repo[0].name)
	})
}

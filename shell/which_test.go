package shell

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWhich(t *testing.T) {
	root := t.TempDir()
	mk := func(rel string, mode os.FileMode) string {
		p := filepath.Join(root, rel)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte("#!/bin/sh\n"), mode))
		require.NoError(t, os.Chmod(p, mode))
		return p
	}
	require.NoError(t, os.MkdirAll(filepath.Join(root, "isdir", "python"), 0o755))
	mk("plain/python", 0o644)
	exe := mk("exe/python", 0o755)
	ownerOnly := mk("owner/python", 0o700)
	groupOnly := mk("group/python", 0o070)
	otherOnly := mk("other/python", 0o001)
	rel := mk("work/bin/python", 0o755)
	dot := mk("work/python", 0o755)
	uid, gid := os.Getuid(), os.Getgid()
	stranger, strangerGroups := uid+12345, []int{gid + 12345}

	cases := []struct {
		name, path, pwd string
		uid             int
		gids            []int
		want            string
	}{
		{"first executable wins", root + "/none:" + root + "/isdir:" + root + "/exe:" + root + "/owner", "/", uid, nil, exe},
		{"not found", root + "/none:" + root + "/isdir", "/", uid, nil, ""},
		{"empty PATH", "", "/", uid, nil, ""},
		{"relative entry from the shell's directory", "bin", root + "/work", uid, nil, rel},
		{"empty entry means the shell's directory", root + "/none::" + root + "/exe", root + "/work", uid, nil, dot},
		{"owner bit for the owner", root + "/owner", "/", uid, nil, ownerOnly},
		{"owner bit not for others", root + "/owner:" + root + "/exe", "/", stranger, strangerGroups, exe},
		{"group bit for the group", root + "/group", "/", stranger, []int{gid}, groupOnly},
		{"other bit for a stranger", root + "/other", "/", stranger, strangerGroups, otherOnly},
	}
	if uid == 0 {
		cases = append(cases, struct {
			name, path, pwd string
			uid             int
			gids            []int
			want            string
		}{"root needs an execute bit", root + "/plain:" + root + "/group", "/", 0, nil, groupOnly})
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, which("python", tc.path, tc.pwd, tc.uid, tc.gids))
		})
	}
}

// TestOnPrompt_WhichPythonDoesNotHoldTheTerminal: `which python` stats
// every PATH entry at each prompt, and a hung mount there can take it
// forever. It must not run under the process's lock, which every reader
// of the terminal and of the command's output takes.
func TestOnPrompt_WhichPythonDoesNotHoldTheTerminal(t *testing.T) {
	s := newSession(t, nil)
	p := s.proc
	entered, gate := make(chan struct{}), make(chan struct{})
	var once sync.Once
	p.mu.Lock()
	p.lookPython = func(path, pwd string) string {
		once.Do(func() { close(entered) })
		<-gate // a stat that hangs
		return "/hung/mount/python"
	}
	p.mu.Unlock()
	defer func() {
		select {
		case <-gate:
		default:
			close(gate)
		}
	}()

	c, err := s.Start(context.Background(), "echo before-the-prompt")
	require.NoError(t, err)
	select {
	case <-entered:
	case <-time.After(time.Minute):
		t.Fatal("the prompt's `which python` never ran")
	}

	// While it hangs, the command's state and output can be read.
	read := make(chan CommandStatus)
	go func() { read <- c.Status() }()
	select {
	case st := <-read:
		assert.True(t, st.Running, "not done before its metadata is known")
	case <-time.After(30 * time.Second):
		t.Fatal("reading the command's status waited for `which python`")
	}
	assert.Contains(t, string(c.Read(0, -1).Data), "before-the-prompt")

	close(gate)
	<-c.Done()
	assert.Equal(t, "/hung/mount/python", c.Status().Metadata.PyInterpreterPath)
}

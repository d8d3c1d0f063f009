package files

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/actionserver/actionserver/internal/asuser"
)

// inotifyFDs counts this process's open inotify instances.
func inotifyFDs(t *testing.T) int {
	t.Helper()
	entries, err := os.ReadDir("/proc/self/fd")
	require.NoError(t, err)
	n := 0
	for _, e := range entries {
		if target, err := os.Readlink("/proc/self/fd/" + e.Name()); err == nil && strings.Contains(target, "inotify") {
			n++
		}
	}
	return n
}

// waitFor reads events until one matches or the deadline passes (a safety
// net against hanging, not a timing assertion).
func waitFor(t *testing.T, ch <-chan WatchEvent, path, op string) WatchEvent {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case ev, ok := <-ch:
			require.True(t, ok, "channel closed before %s %s", op, path)
			if ev.Path == path && ev.Op == op {
				return ev
			}
		case <-deadline:
			t.Fatalf("no %s event for %s", op, path)
		}
	}
}

func startWatch(t *testing.T, ws *Watchers, dir string, recursive bool) (<-chan WatchEvent, context.CancelFunc) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ch, err := ws.Watch(ctx, dir, recursive)
	require.NoError(t, err)
	// Wait for the watch to end so the next test starts with no inotify
	// instance of ours still open.
	t.Cleanup(func() {
		cancel()
		for range ch {
		}
	})
	return ch, cancel
}

func TestWatch_EventsInNestedNewDirectories(t *testing.T) {
	dir := t.TempDir()
	ch, _ := startWatch(t, &Watchers{Coalesce: 10 * time.Millisecond}, dir, true)

	// Created in one go: the inner levels exist before their watch does and
	// are reported from the scan.
	require.NoError(t, os.MkdirAll(dir+"/a/b/c", 0o755))
	assert.True(t, waitFor(t, ch, dir+"/a", OpCreate).IsDir)
	assert.True(t, waitFor(t, ch, dir+"/a/b/c", OpCreate).IsDir)

	f := dir + "/a/b/c/f.txt"
	require.NoError(t, os.WriteFile(f, []byte("x"), 0o644))
	ev := waitFor(t, ch, f, OpCreate)
	assert.False(t, ev.IsDir)
	assert.False(t, ev.Time.IsZero())
	waitFor(t, ch, f, OpWrite)

	require.NoError(t, os.Rename(f, dir+"/a/g.txt"))
	waitFor(t, ch, f, OpRename)
	waitFor(t, ch, dir+"/a/g.txt", OpCreate)

	require.NoError(t, os.Chmod(dir+"/a/g.txt", 0o600))
	waitFor(t, ch, dir+"/a/g.txt", OpChmod)

	require.NoError(t, os.Remove(dir+"/a/g.txt"))
	waitFor(t, ch, dir+"/a/g.txt", OpRemove)

	require.NoError(t, os.RemoveAll(dir+"/a/b"))
	assert.True(t, waitFor(t, ch, dir+"/a/b", OpRemove).IsDir)

	// A directory made after the removal is watched afresh.
	require.NoError(t, os.MkdirAll(dir+"/a/b2", 0o755))
	waitFor(t, ch, dir+"/a/b2", OpCreate)
	require.NoError(t, os.WriteFile(dir+"/a/b2/h", nil, 0o644))
	waitFor(t, ch, dir+"/a/b2/h", OpCreate)
}

func TestWatch_NonRecursiveIgnoresSubdirectories(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.Mkdir(dir+"/sub", 0o755))
	ch, _ := startWatch(t, &Watchers{Coalesce: 10 * time.Millisecond}, dir, false)
	require.NoError(t, os.WriteFile(dir+"/sub/inner", nil, 0o644))
	require.NoError(t, os.WriteFile(dir+"/top", nil, 0o644))
	ev := waitFor(t, ch, dir+"/top", OpCreate)
	assert.Equal(t, dir+"/top", ev.Path, "the inner file came first but was not reported")
}

func TestWatch_CoalescesBursts(t *testing.T) {
	dir := t.TempDir()
	// A long window so the whole burst lands in one batch.
	ch, _ := startWatch(t, &Watchers{Coalesce: 500 * time.Millisecond}, dir, true)
	f, err := os.Create(dir + "/f")
	require.NoError(t, err)
	for range 100 {
		_, err := f.WriteString("x")
		require.NoError(t, err)
	}
	require.NoError(t, f.Close())
	require.NoError(t, os.WriteFile(dir+"/done", nil, 0o644))

	var got []string
	for ev := range ch {
		got = append(got, filepath.Base(ev.Path)+":"+ev.Op)
		if ev.Path == dir+"/done" && ev.Op == OpCreate {
			break
		}
	}
	assert.Equal(t, []string{"f:create", "f:write", "done:create"}, got)
}

func TestWatch_CoalescingKeepsTheFinalState(t *testing.T) {
	create := func(t *testing.T, p string) {
		f, err := os.Create(p)
		require.NoError(t, err)
		require.NoError(t, f.Close())
	}
	write := func(t *testing.T, p string) {
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
		require.NoError(t, err)
		_, err = f.WriteString("x")
		require.NoError(t, err)
		require.NoError(t, f.Close())
	}
	tests := []struct {
		name string
		ops  func(t *testing.T, p string)
		want []string
	}{
		{
			name: "create remove create",
			ops: func(t *testing.T, p string) {
				create(t, p)
				require.NoError(t, os.Remove(p))
				create(t, p)
			},
			want: []string{"f:create", "f:remove", "f:create"},
		},
		{
			name: "writes merge only until the file goes",
			ops: func(t *testing.T, p string) {
				create(t, p)
				write(t, p)
				write(t, p)
				require.NoError(t, os.Remove(p))
				create(t, p)
				write(t, p)
				write(t, p)
			},
			want: []string{"f:create", "f:write", "f:remove", "f:create", "f:write"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			// A long window so every step lands in one batch.
			ch, _ := startWatch(t, &Watchers{Coalesce: 500 * time.Millisecond}, dir, true)
			tt.ops(t, dir+"/f")
			create(t, dir+"/done")

			var got []string
			for ev := range ch {
				if ev.Path == dir+"/done" {
					break
				}
				got = append(got, filepath.Base(ev.Path)+":"+ev.Op)
			}
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestWatch_CancelReleasesInotify(t *testing.T) {
	before := inotifyFDs(t)
	ws := &Watchers{}
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(dir+"/x/y", 0o755))
	ch, cancel := startWatch(t, ws, dir, true)
	assert.Equal(t, before+1, inotifyFDs(t))
	assert.Equal(t, 1, ws.Active())
	cancel()
	for range ch { // drained until closed
	}
	assert.Equal(t, before, inotifyFDs(t))
	assert.Equal(t, 0, ws.Active())
}

func TestWatch_CapOnConcurrentWatchers(t *testing.T) {
	ws := &Watchers{Max: 2}
	dir := t.TempDir()
	_, cancel1 := startWatch(t, ws, dir, false)
	startWatch(t, ws, dir, false)
	_, err := ws.Watch(context.Background(), dir, false)
	assert.ErrorIs(t, err, ErrTooManyWatchers)

	cancel1()
	require.Eventually(t, func() bool { return ws.Active() == 1 }, 10*time.Second, 5*time.Millisecond)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, err = ws.Watch(ctx, dir, false)
	assert.NoError(t, err, "a slot is free again")
}

func TestWatch_RefusesMissingOrFilePath(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"f": ""})
	ws := &Watchers{}
	for _, p := range []string{dir + "/missing", dir + "/f"} {
		_, err := ws.Watch(context.Background(), p, true)
		assert.Error(t, err, p)
	}
	assert.Equal(t, 0, ws.Active())
}

func TestWatch_StalledReaderDoesNotWedgeCancel(t *testing.T) {
	before := inotifyFDs(t)
	dir := t.TempDir()
	ws := &Watchers{Coalesce: time.Millisecond}
	ch, cancel := startWatch(t, ws, dir, true)
	for i := range 2 * watchChannelCapacity {
		require.NoError(t, os.WriteFile(filepath.Join(dir, "f"+itoa(i)), nil, 0o644))
	}
	cancel() // nobody read a single event
	for range ch {
	}
	assert.Equal(t, before, inotifyFDs(t))
}

func TestWatch_DirectoryCapSaysWhatIsNotWatched(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"a", "b", "c", "d"} {
		require.NoError(t, os.MkdirAll(filepath.Join(root, d, "x"), 0o755))
	}
	ws := &Watchers{MaxDirs: 3, MaxDirsTotal: 4, Coalesce: time.Millisecond}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	events, err := ws.Watch(ctx, root, true)
	require.NoError(t, err)
	assert.Equal(t, 3, ws.WatchedDirs(), "the per-watch cap")
	select {
	case ev := <-events:
		assert.Equal(t, OpLimit, ev.Op)
		assert.True(t, ev.IsDir)
	case <-time.After(5 * time.Second):
		t.Fatal("no limit event")
	}

	// The total cap: a second watch gets one directory, a third none.
	ctx2, cancel2 := context.WithCancel(context.Background())
	defer cancel2()
	_, err = ws.Watch(ctx2, filepath.Join(root, "d", "x"), true)
	require.NoError(t, err)
	_, err = ws.Watch(ctx2, filepath.Join(root, "d"), false)
	assert.ErrorIs(t, err, ErrTooManyWatchers)

	cancel()
	cancel2()
	require.Eventually(t, func() bool { return ws.WatchedDirs() == 0 }, 5*time.Second, 10*time.Millisecond,
		"ended watches give their directories back")
}

func TestWatch_TakesTheUsersRights(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to act as another user")
	}
	top := t.TempDir()
	require.NoError(t, os.Chmod(filepath.Dir(top), 0o755))
	require.NoError(t, os.Chmod(top, 0o755))
	closed := filepath.Join(top, "closed")
	require.NoError(t, os.Mkdir(closed, 0o700))
	open := filepath.Join(top, "open")
	require.NoError(t, os.Mkdir(open, 0o777))
	require.NoError(t, os.Chmod(open, 0o777))
	require.NoError(t, os.Symlink(closed, filepath.Join(open, "link")))

	ws := &Watchers{As: &asuser.User{UID: 65534, GID: 65534}, Coalesce: time.Millisecond}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for _, dir := range []string{closed, filepath.Join(open, "link")} {
		_, err := ws.Watch(ctx, dir, true)
		assert.ErrorIs(t, err, os.ErrPermission, dir)
	}
	events, err := ws.Watch(ctx, open, true)
	require.NoError(t, err)
	require.NoError(t, os.Mkdir(filepath.Join(open, "sub"), 0o755))
	select {
	case ev := <-events:
		assert.Equal(t, OpCreate, ev.Op)
		assert.Equal(t, filepath.Join(open, "sub"), ev.Path)
	case <-time.After(5 * time.Second):
		t.Fatal("no event")
	}
	assert.Equal(t, 2, ws.WatchedDirs(), "the new directory is watched too")
}

package asuser_test

import (
	"bufio"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/actionserver/actionserver/internal/asuser"
)

// nobody is an unprivileged identity with no name needed.
var nobody = &asuser.User{UID: 65534, GID: 65534}

// openDir is a temporary directory any user can enter, with mode perm.
func openDir(t *testing.T, perm fs.FileMode) string {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.Chmod(filepath.Dir(dir), 0o755))
	require.NoError(t, os.Chmod(dir, perm))
	return dir
}

func requireRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("switching filesystem rights needs root")
	}
}

// threadFSUID reads the filesystem uid of the calling thread.
func threadFSUID(t *testing.T) string {
	t.Helper()
	f, err := os.Open("/proc/thread-self/status")
	require.NoError(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "Uid:"); ok {
			ids := strings.Fields(rest)
			require.Len(t, ids, 4)
			return ids[3]
		}
	}
	t.Fatal("no Uid line")
	return ""
}

func TestDo_NilUserRunsWithTheServersRights(t *testing.T) {
	var u *asuser.User
	ran := false
	err := u.Do(func() error { ran = true; return errors.New("boom") })
	assert.True(t, ran)
	assert.EqualError(t, err, "boom")
}

func TestDo_KernelChecksTheUsersRightsThroughSymlinks(t *testing.T) {
	requireRoot(t)
	dir := openDir(t, 0o777)
	secret := filepath.Join(dir, "secret")
	require.NoError(t, os.WriteFile(secret, []byte("root only"), 0o600))
	require.NoError(t, os.Symlink(secret, filepath.Join(dir, "a.png")))
	closed := filepath.Join(dir, "closed")
	require.NoError(t, os.Mkdir(closed, 0o700))

	err := nobody.Do(func() error {
		_, err := os.ReadFile(filepath.Join(dir, "a.png"))
		return err
	})
	assert.ErrorIs(t, err, fs.ErrPermission, "read through a link")
	err = nobody.Do(func() error { return os.WriteFile(filepath.Join(closed, "x"), nil, 0o644) })
	assert.ErrorIs(t, err, fs.ErrPermission, "create in a root-only directory")
	err = nobody.Do(func() error { return os.WriteFile(filepath.Join(dir, "a.png"), []byte("pwned"), 0o644) })
	assert.ErrorIs(t, err, fs.ErrPermission, "write through a link")
	data, err := os.ReadFile(secret)
	require.NoError(t, err, "the server's own rights are back")
	assert.Equal(t, "root only", string(data))
}

func TestDo_CreatedFilesBelongToTheUser(t *testing.T) {
	requireRoot(t)
	dir := openDir(t, 0o777)
	p := filepath.Join(dir, "new")
	require.NoError(t, nobody.Do(func() error { return os.WriteFile(p, []byte("x"), 0o644) }))
	fi, err := os.Stat(p)
	require.NoError(t, err)
	st := fi.Sys().(*syscall.Stat_t)
	assert.Equal(t, [2]uint32{65534, 65534}, [2]uint32{st.Uid, st.Gid})
}

func TestDo_SupplementaryGroupsApply(t *testing.T) {
	requireRoot(t)
	dir := openDir(t, 0o755)
	p := filepath.Join(dir, "group-readable")
	require.NoError(t, os.WriteFile(p, []byte("g"), 0o640))
	require.NoError(t, os.Chown(p, 0, 4242))
	member := &asuser.User{UID: 65534, GID: 65534, Groups: []uint32{4242}}
	assert.NoError(t, member.Do(func() error { _, err := os.ReadFile(p); return err }))
	assert.ErrorIs(t, nobody.Do(func() error { _, err := os.ReadFile(p); return err }), fs.ErrPermission)
}

func TestDo_ThreadsStartedMeanwhileKeepTheServersRights(t *testing.T) {
	requireRoot(t)
	// Goroutines started inside f that need threads of their own: each
	// thread the runtime makes for them must come from its template, not
	// be cloned from f's thread with the user's rights.
	const n = 8
	got := make([]string, n)
	var inside string
	err := nobody.Do(func() error {
		inside = threadFSUID(t)
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				// Block in a system call, so further threads are needed.
				time.Sleep(20 * time.Millisecond)
				got[i] = threadFSUID(t)
			}()
		}
		wg.Wait()
		return nil
	})
	require.NoError(t, err)
	assert.Equal(t, "65534", inside)
	for i := range n {
		assert.Equal(t, "0", got[i], "goroutine %d", i)
	}
}

func TestDo_RightsAreRestoredAfterAPanic(t *testing.T) {
	requireRoot(t)
	assert.PanicsWithValue(t, "in f", func() {
		_ = nobody.Do(func() error { panic("in f") })
	})
	// Every thread the runtime has (it reuses the released one) is root's.
	for range 4 * runtime.GOMAXPROCS(0) {
		done := make(chan string)
		go func() {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			done <- threadFSUID(t)
		}()
		assert.Equal(t, "0", <-done)
	}
}

func TestDo_WithoutRootIsRefused(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("needs a non-root user")
	}
	ran := false
	err := nobody.Do(func() error { ran = true; return nil })
	assert.Error(t, err)
	assert.False(t, ran)
}

// BenchmarkDo_ReadSmallFile reads a 100-byte file with the server's rights
// and through Do with a user's: the difference is what a switch costs
// (a goroutine, a locked thread, six system calls).
func BenchmarkDo_ReadSmallFile(b *testing.B) {
	dir := b.TempDir()
	if err := os.Chmod(filepath.Dir(dir), 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	p := filepath.Join(dir, "small")
	if err := os.WriteFile(p, make([]byte, 100), 0o644); err != nil {
		b.Fatal(err)
	}
	users := map[string]*asuser.User{"server": nil}
	if os.Geteuid() == 0 {
		users["sandbox-user"] = nobody
	}
	for name, u := range users {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				if err := u.Do(func() error { _, err := os.ReadFile(p); return err }); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func TestDo_GoexitInFReturnsAnErrorInsteadOfHanging(t *testing.T) {
	requireRoot(t)
	err := nobody.Do(func() error { runtime.Goexit(); return nil })
	assert.Error(t, err)
	// The rights came back on every thread the runtime may reuse.
	for range 4 * runtime.GOMAXPROCS(0) {
		done := make(chan string)
		go func() {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			done <- threadFSUID(t)
		}()
		assert.Equal(t, "0", <-done)
	}
}

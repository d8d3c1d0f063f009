package files

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/actionserver/actionserver/internal/asuser"
)

// Watch operations, as WatchEvent.Op carries them.
const (
	OpCreate = "create"
	OpWrite  = "write"
	OpRemove = "remove"
	OpRename = "rename"
	OpChmod  = "chmod"
	// OpLimit says that the directory at Path, and what is below it, is
	// not watched: the watch reached its cap on directories (see
	// Watchers.MaxDirs). It comes once per watch.
	OpLimit = "limit"
)

// WatchEvent is one change under a watched directory.
type WatchEvent struct {
	Path  string    `json:"path"`
	Op    string    `json:"op"`
	IsDir bool      `json:"is_dir"`
	Time  time.Time `json:"time"`
}

// ErrTooManyWatchers is returned by Watch when the Watchers' cap is reached.
var ErrTooManyWatchers = errors.New("too many concurrent watchers")

// Defaults for Watchers.
const (
	DefaultMaxWatchers = 16
	// DefaultMaxDirs is how many directories one recursive watch watches
	// (one inotify watch each).
	DefaultMaxDirs = 8192
	// DefaultMaxDirsTotal is how many directories all watches together
	// watch, well under the kernel's per-user max_user_watches.
	DefaultMaxDirsTotal  = 32768
	DefaultCoalesce      = 50 * time.Millisecond
	defaultMaxPending    = 4096
	watchChannelCapacity = 256
)

// Watchers hands out file-system watches and caps how many run at once, so
// clients cannot exhaust the kernel's inotify instances. The zero value uses
// the defaults.
type Watchers struct {
	// Max is the number of concurrent watches; 0 means DefaultMaxWatchers.
	Max int
	// Coalesce is how long events are gathered before they are delivered;
	// within it, an operation on a path that repeats the path's previous
	// one is merged into it. 0 means DefaultCoalesce.
	Coalesce time.Duration
	// MaxDirs caps the directories one watch watches, MaxDirsTotal those
	// of all watches; 0 means DefaultMaxDirs and DefaultMaxDirsTotal. A
	// watch at a cap leaves the rest unwatched and says so with one
	// OpLimit event.
	MaxDirs, MaxDirsTotal int
	// As, when set, gives the watches its filesystem rights (see package
	// asuser): which directories can be watched, and which links are
	// followed, are that user's to decide. Each watch then keeps one OS
	// thread while it runs.
	As *asuser.User

	mu     sync.Mutex
	active int
	dirs   int // directories watched by all watches
}

// Watch reports changes under dir (and, if recursive, in every directory
// below it, including ones created later) on the returned channel until ctx
// ends; the inotify instance is released before the channel closes. dir
// must be an existing directory.
func (ws *Watchers) Watch(ctx context.Context, dir string, recursive bool) (<-chan WatchEvent, error) {
	var out <-chan WatchEvent
	err := ws.As.Do(func() error {
		var err error
		out, err = ws.watch(ctx, dir, recursive)
		return err
	})
	return out, err
}

// watch is Watch with the caller's rights; the watch's goroutine takes
// ws.As's.
func (ws *Watchers) watch(ctx context.Context, dir string, recursive bool) (<-chan WatchEvent, error) {
	fi, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("watch %s: %w", dir, err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("watch %s: not a directory", dir)
	}
	if err := ws.acquire(); err != nil {
		return nil, err
	}
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		ws.release()
		return nil, fmt.Errorf("watch %s: %w", dir, err)
	}
	w := &watch{
		fw:        fw,
		recursive: recursive,
		dirs:      map[string]bool{},
		out:       make(chan WatchEvent, watchChannelCapacity),
		coalesce:  ws.Coalesce,
		ws:        ws,
	}
	if w.coalesce <= 0 {
		w.coalesce = DefaultCoalesce
	}
	if err := w.add(filepath.Clean(dir), false); err != nil {
		fw.Close()
		ws.release()
		return nil, fmt.Errorf("watch %s: %w", dir, err)
	}
	go func() {
		// In this order, so a closed channel means the inotify instance is
		// gone and the slot is free.
		defer close(w.out)
		defer ws.release()
		defer w.fw.Close()
		defer func() { ws.releaseDirs(len(w.dirs)) }()
		_ = ws.As.Do(func() error { w.run(ctx); return nil })
	}()
	return w.out, nil
}

func (ws *Watchers) acquire() error {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	limit := ws.Max
	if limit <= 0 {
		limit = DefaultMaxWatchers
	}
	if ws.active >= limit {
		return fmt.Errorf("%w (limit %d)", ErrTooManyWatchers, limit)
	}
	ws.active++
	return nil
}

func (ws *Watchers) release() {
	ws.mu.Lock()
	ws.active--
	ws.mu.Unlock()
}

// reserveDir takes one directory from the caps, given the watch's own
// count; false when a cap is reached.
func (ws *Watchers) reserveDir(own int) bool {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	perWatch, total := ws.MaxDirs, ws.MaxDirsTotal
	if perWatch <= 0 {
		perWatch = DefaultMaxDirs
	}
	if total <= 0 {
		total = DefaultMaxDirsTotal
	}
	if own >= perWatch || ws.dirs >= total {
		return false
	}
	ws.dirs++
	return true
}

func (ws *Watchers) releaseDirs(n int) {
	ws.mu.Lock()
	ws.dirs -= n
	ws.mu.Unlock()
}

// WatchedDirs returns how many directories all watches watch.
func (ws *Watchers) WatchedDirs() int {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	return ws.dirs
}

// Active returns how many watches are running.
func (ws *Watchers) Active() int {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	return ws.active
}

type watch struct {
	fw        *fsnotify.Watcher
	recursive bool
	dirs      map[string]bool // directories being watched
	out       chan WatchEvent
	coalesce  time.Duration
	pending   []WatchEvent
	last      map[string]int // path -> index in pending of its latest event
	ws        *Watchers      // the caps on directories
	limited   bool           // the OpLimit event was queued
}

// add watches dir and, when recursive, the directories below it. With
// announce, entries found inside are reported as created: they appeared
// before their directory's watch could see them.
func (w *watch) add(dir string, announce bool) error {
	if w.dirs[dir] {
		return nil
	}
	if !w.ws.reserveDir(len(w.dirs)) {
		if len(w.dirs) == 0 {
			return fmt.Errorf("%w: the cap on watched directories is reached", ErrTooManyWatchers)
		}
		if !w.limited {
			w.limited = true
			slog.Warn("watch: directory cap reached; the rest is not watched", "path", dir)
			w.queue(WatchEvent{Path: dir, Op: OpLimit, IsDir: true, Time: time.Now()})
		}
		return nil
	}
	if err := w.fw.Add(dir); err != nil {
		w.ws.releaseDirs(1)
		return err
	}
	w.dirs[dir] = true
	if !w.recursive {
		return nil
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil // gone or unreadable meanwhile: nothing below to watch
	}
	for _, ent := range entries {
		p := filepath.Join(dir, ent.Name())
		isDir := ent.IsDir()
		if announce {
			w.queue(WatchEvent{Path: p, Op: OpCreate, IsDir: isDir, Time: time.Now()})
		}
		if isDir {
			if err := w.add(p, announce); err != nil {
				slog.Debug("watch: add subdirectory", "path", p, "err", err)
			}
		}
	}
	return nil
}

func (w *watch) run(ctx context.Context) {
	var flush <-chan time.Time
	var timer *time.Timer
	if len(w.pending) > 0 { // a limit met while the watch was set up
		timer = time.NewTimer(w.coalesce)
		flush = timer.C
	}
	for {
		select {
		case <-ctx.Done():
			if timer != nil {
				timer.Stop()
			}
			return
		case err, ok := <-w.fw.Errors:
			if !ok {
				return
			}
			slog.Warn("watch: event stream error", "err", err)
		case ev, ok := <-w.fw.Events:
			if !ok {
				return
			}
			w.handle(ev)
			if flush == nil && len(w.pending) > 0 {
				timer = time.NewTimer(w.coalesce)
				flush = timer.C
			}
		case <-flush:
			flush, timer = nil, nil
			if !w.deliver(ctx) {
				return
			}
		}
	}
}

// handle turns one fsnotify event into ours and keeps the set of watched
// directories current.
func (w *watch) handle(ev fsnotify.Event) {
	now := time.Now()
	p := filepath.Clean(ev.Name)
	wasDir := w.dirs[p]
	if ev.Has(fsnotify.Create) {
		fi, err := os.Lstat(p)
		isDir := err == nil && fi.IsDir()
		w.queue(WatchEvent{Path: p, Op: OpCreate, IsDir: isDir, Time: now})
		if isDir && w.recursive {
			if err := w.add(p, true); err != nil && !errors.Is(err, fs.ErrNotExist) {
				slog.Debug("watch: add new directory", "path", p, "err", err)
			}
		}
	}
	if ev.Has(fsnotify.Write) {
		w.queue(WatchEvent{Path: p, Op: OpWrite, Time: now})
	}
	if ev.Has(fsnotify.Remove) {
		w.forget(p)
		w.queue(WatchEvent{Path: p, Op: OpRemove, IsDir: wasDir, Time: now})
	}
	if ev.Has(fsnotify.Rename) {
		w.forget(p)
		w.queue(WatchEvent{Path: p, Op: OpRename, IsDir: wasDir, Time: now})
	}
	if ev.Has(fsnotify.Chmod) {
		fi, err := os.Lstat(p)
		w.queue(WatchEvent{Path: p, Op: OpChmod, IsDir: (err == nil && fi.IsDir()) || wasDir, Time: now})
	}
}

// forget drops a directory that went away, and those below it, from the
// watch list.
func (w *watch) forget(p string) {
	if !w.dirs[p] {
		return
	}
	prefix := p + string(filepath.Separator)
	for d := range w.dirs {
		if d == p || len(d) > len(prefix) && d[:len(prefix)] == prefix {
			delete(w.dirs, d)
			w.ws.releaseDirs(1)
			_ = w.fw.Remove(d) // the kernel may already have dropped it
		}
	}
}

// queue adds an event to the batch being gathered and drops events past a
// bound so a storm cannot grow memory without limit. An event that repeats
// its path's latest one is merged into it; only that one, so that after
// create, remove, create the last event a client sees for the path is
// still the one that tells its state.
func (w *watch) queue(ev WatchEvent) {
	if w.last == nil {
		w.last = map[string]int{}
	}
	if i, ok := w.last[ev.Path]; ok && w.pending[i].Op == ev.Op {
		return
	}
	if len(w.pending) >= defaultMaxPending {
		slog.Warn("watch: dropping events in a burst", "path", ev.Path)
		return
	}
	w.last[ev.Path] = len(w.pending)
	w.pending = append(w.pending, ev)
}

// deliver sends the gathered batch; it gives up when ctx ends so a client
// that stopped reading cannot wedge the watch.
func (w *watch) deliver(ctx context.Context) bool {
	batch := w.pending
	w.pending, w.last = nil, nil
	for _, ev := range batch {
		select {
		case w.out <- ev:
		case <-ctx.Done():
			return false
		}
	}
	return true
}

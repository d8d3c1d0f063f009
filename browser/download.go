package browser

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/gabriel-vasile/mimetype"

	"github.com/actionserver/actionserver/internal/asuser"
	"github.com/actionserver/actionserver/internal/chown"
)

// Download is a file that a browse_interactive step downloaded. The executor
// answers the step with OpenHands' download observation: content Content,
// extras file_path = Path.
type Download struct {
	// Path is the copy of the file in the work directory, file_<N><ext>.
	Path string
	// Content is the exact observation text.
	Content string
}

// downloadContent is the text of OpenHands' download observation.
func downloadContent(actions, path string) string {
	return fmt.Sprintf("Execution of the previous action %s resulted in a file download. The downloaded file is saved at location: %s", actions, path)
}

// downloadTracker follows Chromium's download events. Its handle method runs
// in chromedp's event loop, so it only records.
type downloadTracker struct {
	mu    sync.Mutex
	order []*download
	byID  map[string]*download
}

type download struct {
	guid      string
	suggested string
	state     cdpbrowser.DownloadProgressState
	done      chan struct{}
}

func newDownloadTracker() *downloadTracker {
	return &downloadTracker{byID: map[string]*download{}}
}

func (d *downloadTracker) handle(ev any) {
	d.mu.Lock()
	defer d.mu.Unlock()
	switch ev := ev.(type) {
	case *cdpbrowser.EventDownloadWillBegin:
		if _, ok := d.byID[ev.GUID]; ok {
			return
		}
		dl := &download{guid: ev.GUID, suggested: ev.SuggestedFilename, done: make(chan struct{})}
		d.byID[ev.GUID] = dl
		d.order = append(d.order, dl)
	case *cdpbrowser.EventDownloadProgress:
		dl, ok := d.byID[ev.GUID]
		if !ok || dl.state == cdpbrowser.DownloadProgressStateCompleted || dl.state == cdpbrowser.DownloadProgressStateCanceled {
			return
		}
		dl.state = ev.State
		if ev.State == cdpbrowser.DownloadProgressStateCompleted || ev.State == cdpbrowser.DownloadProgressStateCanceled {
			close(dl.done)
		}
	}
}

// mark returns a position to pass to since.
func (d *downloadTracker) mark() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.order)
}

// since returns the downloads that began after mark.
func (d *downloadTracker) since(mark int) []*download {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]*download(nil), d.order[mark:]...)
}

// waitBegin waits up to d for a download to begin after mark.
func (d *downloadTracker) waitBegin(ctx context.Context, mark int, wait time.Duration) []*download {
	deadline := time.Now().Add(wait)
	for {
		if got := d.since(mark); len(got) > 0 || time.Now().After(deadline) || ctx.Err() != nil {
			return got
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// collectDownload waits for the first download of the step to finish and
// copies it to <workdir>/file_<N><ext>, as OpenHands does. It returns nil when
// the download failed or did not finish in time.
func (b *Browser) collectDownload(ctx context.Context, dls []*download, actions string) *Download {
	if len(dls) == 0 {
		return nil
	}
	dl := dls[0]
	select {
	case <-dl.done:
	case <-ctx.Done():
		b.log.Warn("download did not finish in time", "guid", dl.guid)
		return nil
	}
	if dl.state != cdpbrowser.DownloadProgressStateCompleted {
		return nil
	}
	src := filepath.Join(b.workDir(), ".downloads", dl.guid)
	in, err := openDownload(src)
	if err != nil {
		b.log.Warn("open download", "src", src, "err", err)
		return nil
	}
	defer in.Close()
	ext := ""
	if mt, err := mimetype.DetectReader(in); err == nil && !mt.Is("application/octet-stream") {
		ext = mt.Extension()
	}
	if ext == "" {
		ext = filepath.Ext(dl.suggested)
	}
	if _, err := in.Seek(0, io.SeekStart); err != nil {
		b.log.Warn("read download", "src", src, "err", err)
		return nil
	}
	b.downloadCount++
	dst := filepath.Join(b.workDir(), fmt.Sprintf("file_%d%s", b.downloadCount, ext))
	if err := copyTo(in, dst, b.opts.FileOwner, b.opts.FileUser); err != nil {
		b.log.Warn("copy download", "src", src, "dst", dst, "err", err)
		return nil
	}
	return &Download{Path: dst, Content: downloadContent(actions, dst)}
}

// openDownload opens the file Chromium downloaded, refusing a link or
// anything but a regular file there: the directory is the agent's, and the
// server may be root.
func openDownload(src string) (*os.File, error) {
	in, err := os.OpenFile(src, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	fi, err := in.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = fmt.Errorf("%s is not a regular file", src)
	}
	if err != nil {
		in.Close()
		return nil, err
	}
	return in, nil
}

// copyTo copies in to dst, creating or replacing it with as's filesystem
// rights (a link the agent planted at dst reaches only what the sandbox
// user could write), and gives dst to owner.
func copyTo(in io.Reader, dst string, owner chown.Owner, as *asuser.User) error {
	return as.Do(func() error {
		out, err := os.Create(dst)
		if err != nil {
			return err
		}
		_, err = io.Copy(out, in)
		if err == nil && !owner.IsKeep() {
			err = out.Chown(owner.UID(), owner.GID())
		}
		if cerr := out.Close(); err == nil {
			err = cerr
		}
		return err
	})
}

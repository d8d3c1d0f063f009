package files

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
)

// maxHistoryPerFile is how many undo steps the editor keeps for each file.
const maxHistoryPerFile = 10

// history keeps the editor's undo stack on disk, not in memory: ten versions
// of each of many 10 MiB files would otherwise pin gigabytes. Everything is
// in the directory (one subdirectory per edited file, one numbered file per
// version), so separate processes sharing a directory share the history.
type history struct {
	dir  string // "" until first use, unless fixed
	temp bool   // dir was created here and is removed by close
}

// fileDir is where the versions of path are kept.
func (h *history) fileDir(path string) (string, error) {
	if h.dir == "" {
		dir, err := os.MkdirTemp("", "editor-history-")
		if err != nil {
			return "", fmt.Errorf("create edit history directory: %w", err)
		}
		h.dir, h.temp = dir, true
	}
	sum := sha256.Sum256([]byte(path))
	return filepath.Join(h.dir, hex.EncodeToString(sum[:12])), nil
}

// versions lists the version numbers kept for path, oldest first.
func versions(dir string) ([]int, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var ns []int
	for _, e := range ents {
		if n, err := strconv.Atoi(e.Name()); err == nil {
			ns = append(ns, n)
		}
	}
	slices.Sort(ns)
	return ns, nil
}

func (h *history) add(path, content string) error {
	dir, err := h.fileDir(path)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("save edit history of %s: %w", path, err)
	}
	ns, err := versions(dir)
	if err != nil {
		return fmt.Errorf("save edit history of %s: %w", path, err)
	}
	next := 0
	if len(ns) > 0 {
		next = ns[len(ns)-1] + 1
	}
	if err := os.WriteFile(filepath.Join(dir, strconv.Itoa(next)), []byte(content), 0o600); err != nil {
		return fmt.Errorf("save edit history of %s: %w", path, err)
	}
	for ns = append(ns, next); len(ns) > maxHistoryPerFile; ns = ns[1:] {
		os.Remove(filepath.Join(dir, strconv.Itoa(ns[0])))
	}
	return nil
}

// pop removes and returns the newest entry for path; ok is false when there
// is none.
func (h *history) pop(path string) (content string, ok bool, err error) {
	if h.dir == "" {
		return "", false, nil
	}
	dir, err := h.fileDir(path)
	if err != nil {
		return "", false, err
	}
	ns, err := versions(dir)
	if err != nil || len(ns) == 0 {
		return "", false, err
	}
	name := filepath.Join(dir, strconv.Itoa(ns[len(ns)-1]))
	data, err := os.ReadFile(name)
	os.Remove(name)
	if err != nil {
		return "", false, fmt.Errorf("load edit history of %s: %w", path, err)
	}
	return string(data), true, nil
}

// close removes a history directory this editor created.
func (h *history) close() error {
	if !h.temp {
		return nil
	}
	err := os.RemoveAll(h.dir)
	h.dir, h.temp = "", false
	return err
}

package files

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
)

// maxHistoryPerFile is how many undo steps the editor keeps for each file.
const maxHistoryPerFile = 10

// history keeps the editor's undo stack on disk, not in memory: ten versions
// of each of many 10 MiB files would otherwise pin gigabytes.
type history struct {
	dir     string              // created on first use
	entries map[string][]string // file path -> entry files, oldest first
	next    int
}

func (h *history) add(path, content string) error {
	if h.dir == "" {
		dir, err := os.MkdirTemp("", "editor-history-")
		if err != nil {
			return fmt.Errorf("create edit history directory: %w", err)
		}
		h.dir = dir
		h.entries = map[string][]string{}
	}
	name := filepath.Join(h.dir, strconv.Itoa(h.next))
	h.next++
	if err := os.WriteFile(name, []byte(content), 0o600); err != nil {
		return fmt.Errorf("save edit history of %s: %w", path, err)
	}
	list := append(h.entries[path], name)
	for len(list) > maxHistoryPerFile {
		os.Remove(list[0])
		list = list[1:]
	}
	h.entries[path] = list
	return nil
}

// pop removes and returns the newest entry for path; ok is false when there
// is none.
func (h *history) pop(path string) (content string, ok bool, err error) {
	list := h.entries[path]
	if len(list) == 0 {
		return "", false, nil
	}
	name := list[len(list)-1]
	h.entries[path] = list[:len(list)-1]
	data, err := os.ReadFile(name)
	os.Remove(name)
	if err != nil {
		return "", false, fmt.Errorf("load edit history of %s: %w", path, err)
	}
	return string(data), true, nil
}

func (h *history) close() error {
	if h.dir == "" {
		return nil
	}
	err := os.RemoveAll(h.dir)
	h.dir, h.entries = "", nil
	return err
}

package files

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// List returns the names in dir for the UI's file tree (the list_files
// endpoint): directories first, each with a trailing "/", then the other
// entries, each group sorted case-insensitively; hidden entries included;
// entries that do not resolve (broken symlinks) left out. A missing path, a
// path that is not a directory, or any error gives an empty list.
func List(dir string) []string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return []string{}
	}
	var dirs, others []string
	for _, ent := range entries {
		fi, err := os.Stat(filepath.Join(dir, ent.Name()))
		if err != nil {
			continue
		}
		if fi.IsDir() {
			dirs = append(dirs, ent.Name()+"/")
		} else {
			others = append(others, ent.Name())
		}
	}
	sortFold(dirs)
	sortFold(others)
	return append(append([]string{}, dirs...), others...)
}

// sortFold sorts by lower-cased name, breaking ties bytewise so the order
// does not depend on the directory's on-disk order.
func sortFold(names []string) {
	sort.Slice(names, func(i, j int) bool {
		a, b := strings.ToLower(names[i]), strings.ToLower(names[j])
		if a != b {
			return a < b
		}
		return names[i] < names[j]
	})
}

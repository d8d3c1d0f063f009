package files

import "errors"

// convertToMarkdown renders a supported document as Markdown.
func convertToMarkdown(p string) (string, error) {
	return "", errors.New("not implemented")
}

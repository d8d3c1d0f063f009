package agentskills_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/actionserver/actionserver/internal/testpdf"
	"github.com/actionserver/actionserver/plugins"
)

// The document libraries come from the test set-up's Debian packages
// (python3-pypdf, python3-docx, python3-pylatexenc); Debian has no
// python-pptx, so parse_pptx is only checked without it.
func TestParse_ReadsDocuments(t *testing.T) {
	k := startKernel(t, plugins.Env{})
	pdf := filepath.Join(k.cwd, "doc.pdf")
	writeFile(t, pdf, string(testpdf.Pages("Hello PDF", "Second page")))
	tex := filepath.Join(k.cwd, "paper.tex")
	writeFile(t, tex, "\\section{Intro}\nHello \\textbf{world} and $\\alpha$.\n")
	docx := filepath.Join(k.cwd, "notes.docx")

	runSteps(t, k, []step{
		{"pdf: a page each", "parse_pdf(" + py(pdf) + ")",
			"[Reading PDF file from " + pdf + "]\n@@ Page 1 @@\nHello PDF\n\n@@ Page 2 @@\nSecond page"},
		{"docx: written by the library itself", "import docx\nd = docx.Document()\nd.add_paragraph('First para')\n" +
			"d.add_paragraph('Second para')\nd.save(" + py(docx) + ")\nparse_docx(" + py(docx) + ")",
			"[Reading DOCX file from " + docx + "]\n@@ Page 1 @@\nFirst para\n\n@@ Page 2 @@\nSecond para"},
		{"latex: markup becomes text", "parse_latex('paper.tex')",
			"[Reading LaTex file from paper.tex]\n§ INTRO\n\nHello world and α."},
		{"missing file", "parse_pdf('nope.pdf')", "ERROR: File nope.pdf not found."},
	})
}

// A kernel without a format's library gets a message saying which
// package to install rather than a NameError. sys.modules entries of None
// make those imports fail, whatever is installed.
func TestParse_MissingLibraryIsExplained(t *testing.T) {
	k := startKernel(t, plugins.Env{})
	cases := []struct {
		call    string
		blocked []string
		want    string
	}{
		{"parse_pdf('a.pdf')", []string{"pypdf", "PyPDF2"},
			"ERROR: parse_pdf needs the Python package pypdf or PyPDF2, which this kernel cannot import. " +
				"Install it (for example with `%pip install pypdf` in a cell) and call parse_pdf again."},
		{"parse_docx('a.docx')", []string{"docx"},
			"ERROR: parse_docx needs the Python package python-docx, which this kernel cannot import. " +
				"Install it (for example with `%pip install python-docx` in a cell) and call parse_docx again."},
		{"parse_latex('a.tex')", []string{"pylatexenc"},
			"ERROR: parse_latex needs the Python package pylatexenc, which this kernel cannot import. " +
				"Install it (for example with `%pip install pylatexenc` in a cell) and call parse_latex again."},
		{"parse_pptx('a.pptx')", []string{"pptx"},
			"ERROR: parse_pptx needs the Python package python-pptx, which this kernel cannot import. " +
				"Install it (for example with `%pip install python-pptx` in a cell) and call parse_pptx again."},
	}
	for _, tc := range cases {
		t.Run(strings.SplitN(tc.call, "(", 2)[0], func(t *testing.T) {
			var block, unblock strings.Builder
			block.WriteString("import sys\n")
			for _, m := range tc.blocked {
				fmt.Fprintf(&block, "sys.modules[%s] = None\n", py(m))
				fmt.Fprintf(&unblock, "sys.modules.pop(%s, None)\n", py(m))
			}
			k.run(t, block.String())
			t.Cleanup(func() { k.run(t, unblock.String()) })
			runSteps(t, k, []step{{tc.call, tc.call, tc.want}})
		})
	}
}

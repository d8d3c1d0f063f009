package files

import (
	"archive/zip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func makeOOXML(t *testing.T, name string, parts map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	p := filepath.Join(dir, name)
	f, err := os.Create(p)
	require.NoError(t, err)
	zw := zip.NewWriter(f)
	for n, body := range parts {
		w, err := zw.Create(n)
		require.NoError(t, err)
		_, err = w.Write([]byte(body))
		require.NoError(t, err)
	}
	require.NoError(t, zw.Close())
	require.NoError(t, f.Close())
	return p
}

const wNS = `xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"`

func TestView_DocxAsMarkdown(t *testing.T) {
	p := makeOOXML(t, "r.docx", map[string]string{"word/document.xml": `<w:document ` + wNS + `><w:body>
<w:p><w:pPr><w:pStyle w:val="Heading1"/></w:pPr><w:r><w:t>Report</w:t></w:r></w:p>
<w:p><w:r><w:t xml:space="preserve">Hello </w:t></w:r><w:r><w:t>world.</w:t></w:r></w:p>
<w:p><w:pPr><w:numPr/></w:pPr><w:r><w:t>item</w:t></w:r></w:p>
<w:tbl><w:tr><w:tc><w:p><w:r><w:t>k</w:t></w:r></w:p></w:tc><w:tc><w:p><w:r><w:t>v</w:t></w:r></w:p></w:tc></w:tr>
<w:tr><w:tc><w:p><w:r><w:t>a</w:t></w:r></w:p></w:tc><w:tc><w:p><w:r><w:t>1</w:t></w:r></w:p></w:tc></w:tr></w:tbl>
</w:body></w:document>`})
	out := run(t, newTestEditor(t, ""), EditRequest{Command: CmdView, Path: p})
	assert.Equal(t, "Here's the content of the file "+p+" displayed in Markdown format:\n"+
		"# Report\n\nHello world.\n\n* item\n\n| k | v |\n| --- | --- |\n| a | 1 |\n", out)
}

func TestView_XlsxAsMarkdown(t *testing.T) {
	p := makeOOXML(t, "s.xlsx", map[string]string{
		"xl/workbook.xml":            `<workbook xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sheets><sheet name="Data" sheetId="1" r:id="rId1"/></sheets></workbook>`,
		"xl/_rels/workbook.xml.rels": `<Relationships><Relationship Id="rId1" Target="worksheets/sheet1.xml"/></Relationships>`,
		"xl/sharedStrings.xml":       `<sst><si><t>name</t></si><si><t>qty</t></si><si><t>apple</t></si></sst>`,
		"xl/worksheets/sheet1.xml": `<worksheet><sheetData>
<row r="1"><c r="A1" t="s"><v>0</v></c><c r="B1" t="s"><v>1</v></c></row>
<row r="2"><c r="A2" t="s"><v>2</v></c><c r="B2"><v>3</v></c></row></sheetData></worksheet>`,
	})
	out := run(t, newTestEditor(t, ""), EditRequest{Command: CmdView, Path: p})
	assert.Equal(t, "Here's the content of the file "+p+" displayed in Markdown format:\n"+
		"## Data\n| name | qty |\n| --- | --- |\n| apple | 3 |\n", out)
}

func TestView_PptxAsMarkdown(t *testing.T) {
	p := makeOOXML(t, "d.pptx", map[string]string{
		"ppt/presentation.xml":            `<presentation xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sldIdLst><sldId id="256" r:id="rId2"/></sldIdLst></presentation>`,
		"ppt/_rels/presentation.xml.rels": `<Relationships><Relationship Id="rId2" Target="slides/slide1.xml"/></Relationships>`,
		"ppt/slides/slide1.xml": `<sld><cSld><spTree>
<sp><nvSpPr><nvPr><ph type="title"/></nvPr></nvSpPr><txBody><p><r><t>Welcome</t></r></p></txBody></sp>
<sp><txBody><p><r><t>First point</t></r></p><p><r><t>Second</t></r></p></txBody></sp>
<pic><nvPicPr><cNvPr id="4" name="Picture 3" descr="a cat"/></nvPicPr></pic>
</spTree></cSld></sld>`,
	})
	out := run(t, newTestEditor(t, ""), EditRequest{Command: CmdView, Path: p})
	assert.Equal(t, "Here's the content of the file "+p+" displayed in Markdown format:\n"+
		"<!-- Slide number: 1 -->\n# Welcome\nFirst point\nSecond\n\n![a cat](Picture3.jpg)\n", out)
}

func TestView_LongDocumentIsTruncated(t *testing.T) {
	// Multi-byte characters: the limit counts characters, not bytes.
	text := strings.Repeat("é", 20000)
	p := makeOOXML(t, "long.docx", map[string]string{"word/document.xml": `<w:document ` + wNS + `><w:body>
<w:p><w:r><w:t>` + text + `</w:t></w:r></w:p></w:body></w:document>`})
	out := run(t, newTestEditor(t, ""), EditRequest{Command: CmdView, Path: p})
	assert.Equal(t, "Here's the content of the file "+p+" displayed in Markdown format:\n"+text[:2*16000]+
		"<response clipped><NOTE>Due to the max output limit, only part of this file has been shown to you. Please use Python libraries to view the entire file or search for specific content within the file.</NOTE>\n", out)
}

func TestView_UnconvertibleDocumentsSayWhy(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"x.pdf": "%PDF-1.4", "broken.docx": "not a zip", "s.mp3": "ID3"})
	ed := newTestEditor(t, dir)
	assert.Equal(t, "ERROR:\nError in converting file to Markdown: PDF text extraction is not available in this runtime. Please use Python code to read "+dir+"/x.pdf",
		run(t, ed, EditRequest{Command: CmdView, Path: dir + "/x.pdf"}))
	assert.Contains(t, run(t, ed, EditRequest{Command: CmdView, Path: dir + "/broken.docx"}), "ERROR:\nError in converting file to Markdown: ")
	assert.Contains(t, run(t, ed, EditRequest{Command: CmdView, Path: dir + "/s.mp3"}), ". Please use Python code to read "+dir+"/s.mp3")
}

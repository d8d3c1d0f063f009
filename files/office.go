package files

import (
	"archive/zip"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// maxXMLPart bounds how much of one document part is read, so a crafted
// archive cannot make a small file expand into gigabytes of memory.
const maxXMLPart = 64 << 20

// convertToMarkdown renders a supported document as Markdown. Word,
// Excel and PowerPoint files are zip archives of XML and are converted here;
// PDF and audio have no conversion and report why.
func convertToMarkdown(p string) (string, error) {
	switch strings.ToLower(pySuffix(p)) {
	case ".docx":
		return withZip(p, docxToMarkdown)
	case ".xlsx":
		return withZip(p, xlsxToMarkdown)
	case ".pptx":
		return withZip(p, pptxToMarkdown)
	case ".pdf":
		return "", errors.New("PDF text extraction is not available in this runtime")
	}
	return "", fmt.Errorf("conversion of %s files is not available in this runtime", pySuffix(p))
}

type ooxml struct{ files map[string]*zip.File }

func withZip(p string, conv func(ooxml) (string, error)) (string, error) {
	zr, err := zip.OpenReader(p)
	if err != nil {
		return "", fmt.Errorf("open %s as a zip archive: %w", p, err)
	}
	defer zr.Close()
	o := ooxml{files: map[string]*zip.File{}}
	for _, f := range zr.File {
		o.files[f.Name] = f
	}
	return conv(o)
}

// decoder opens one XML part of the archive.
func (o ooxml) decoder(name string) (*xml.Decoder, io.Closer, error) {
	f := o.files[name]
	if f == nil {
		return nil, nil, fmt.Errorf("missing part %s", name)
	}
	rc, err := f.Open()
	if err != nil {
		return nil, nil, err
	}
	return xml.NewDecoder(io.LimitReader(rc, maxXMLPart)), rc, nil
}

// rels maps relationship ids of a part to their targets' archive paths.
func (o ooxml) rels(part string) map[string]string {
	dir, base := path.Split(part)
	d, c, err := o.decoder(dir + "_rels/" + base + ".rels")
	if err != nil {
		return map[string]string{}
	}
	defer c.Close()
	out := map[string]string{}
	for {
		tok, err := d.Token()
		if err != nil {
			return out
		}
		if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "Relationship" {
			target := attr(se, "Target")
			if !strings.HasPrefix(target, "/") {
				target = path.Join(dir, target)
			} else {
				target = strings.TrimPrefix(target, "/")
			}
			out[attr(se, "Id")] = target
		}
	}
}

// relID is an element's r:id, the namespaced "id" that names a relationship
// (a plain "id" may sit beside it).
func relID(se xml.StartElement) string {
	for _, a := range se.Attr {
		if a.Name.Local == "id" && a.Name.Space != "" {
			return a.Value
		}
	}
	return ""
}

func attr(se xml.StartElement, local string) string {
	for _, a := range se.Attr {
		if a.Name.Local == local {
			return a.Value
		}
	}
	return ""
}

// markdownTable renders rows with the first as header, as markdownify does
// for an HTML table.
func markdownTable(rows [][]string) string {
	if len(rows) == 0 {
		return ""
	}
	width := 0
	for _, r := range rows {
		width = max(width, len(r))
	}
	var b strings.Builder
	for i, r := range rows {
		b.WriteString("|")
		for j := range width {
			cell := ""
			if j < len(r) {
				cell = strings.ReplaceAll(strings.TrimSpace(r[j]), "\n", " ")
			}
			b.WriteString(" " + cell + " |")
		}
		b.WriteString("\n")
		if i == 0 {
			b.WriteString("|")
			for range width {
				b.WriteString(" --- |")
			}
			b.WriteString("\n")
		}
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// lazyRegexp compiles expr on first use: compiled at package
// initialisation, the office parsers' expressions cost every start of the
// server, which mostly never reads an office file.
func lazyRegexp(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}

var headingStyle = lazyRegexp(`(?i)^heading\s*([1-6])$`)

// docxToMarkdown renders paragraphs (headings as "#"), list items and
// tables of word/document.xml.
func docxToMarkdown(o ooxml) (string, error) {
	d, c, err := o.decoder("word/document.xml")
	if err != nil {
		return "", err
	}
	defer c.Close()
	var blocks []string
	var para strings.Builder
	var prefix string
	var table [][]string
	var row []string
	var cell strings.Builder
	depthTable := 0
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return "", fmt.Errorf("parse word/document.xml: %w", err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			switch t.Name.Local {
			case "tbl":
				depthTable++
				if depthTable == 1 {
					table = nil
				}
			case "tr":
				row = nil
			case "tc":
				cell.Reset()
			case "p":
				para.Reset()
				prefix = ""
			case "pStyle":
				v := attr(t, "val")
				if m := headingStyle().FindStringSubmatch(v); m != nil {
					n, _ := strconv.Atoi(m[1])
					prefix = strings.Repeat("#", n) + " "
				} else if strings.EqualFold(v, "Title") {
					prefix = "# "
				}
			case "numPr":
				if prefix == "" {
					prefix = "* "
				}
			case "tab":
				para.WriteString("\t")
			case "br", "cr":
				para.WriteString("\n")
			case "t":
				var s string
				if err := d.DecodeElement(&s, &t); err != nil {
					return "", fmt.Errorf("parse word/document.xml: %w", err)
				}
				para.WriteString(s)
			}
		case xml.EndElement:
			switch t.Name.Local {
			case "p":
				text := para.String()
				if depthTable > 0 {
					if cell.Len() > 0 {
						cell.WriteString(" ")
					}
					cell.WriteString(text)
				} else if strings.TrimSpace(text) != "" {
					blocks = append(blocks, prefix+text)
				}
			case "tc":
				row = append(row, cell.String())
			case "tr":
				table = append(table, row)
			case "tbl":
				depthTable--
				if depthTable == 0 {
					blocks = append(blocks, markdownTable(table))
				}
			}
		}
	}
	return strings.Join(blocks, "\n\n"), nil
}

// xlsxToMarkdown renders each worksheet as "## <name>" and a table whose
// first row is the header.
func xlsxToMarkdown(o ooxml) (string, error) {
	shared, err := o.sharedStrings()
	if err != nil {
		return "", err
	}
	rels := o.rels("xl/workbook.xml")
	d, c, err := o.decoder("xl/workbook.xml")
	if err != nil {
		return "", err
	}
	type sheet struct{ name, part string }
	var sheets []sheet
	for {
		tok, err := d.Token()
		if err != nil {
			break
		}
		if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "sheet" {
			sheets = append(sheets, sheet{attr(se, "name"), rels[relID(se)]})
		}
	}
	c.Close()
	var parts []string
	for _, s := range sheets {
		rows, err := o.sheetRows(s.part, shared)
		if err != nil {
			return "", err
		}
		parts = append(parts, "## "+s.name+"\n"+markdownTable(rows))
	}
	return strings.TrimSpace(strings.Join(parts, "\n\n")), nil
}

func (o ooxml) sharedStrings() ([]string, error) {
	if o.files["xl/sharedStrings.xml"] == nil {
		return nil, nil
	}
	d, c, err := o.decoder("xl/sharedStrings.xml")
	if err != nil {
		return nil, err
	}
	defer c.Close()
	var out []string
	var cur strings.Builder
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("parse shared strings: %w", err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			switch t.Name.Local {
			case "si":
				cur.Reset()
			case "t":
				var s string
				if err := d.DecodeElement(&s, &t); err != nil {
					return nil, err
				}
				cur.WriteString(s)
			}
		case xml.EndElement:
			if t.Name.Local == "si" {
				out = append(out, cur.String())
			}
		}
	}
}

var cellColumn = lazyRegexp(`^([A-Z]+)`)

// sheetRows reads a worksheet's cell values into a dense grid.
func (o ooxml) sheetRows(part string, shared []string) ([][]string, error) {
	d, c, err := o.decoder(part)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	grid := map[int]map[int]string{}
	rowNo, maxCol := 0, -1
	var ref, typ, val string
	inCell := false
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("parse %s: %w", part, err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			switch t.Name.Local {
			case "row":
				if r, err := strconv.Atoi(attr(t, "r")); err == nil {
					rowNo = r
				} else {
					rowNo++
				}
			case "c":
				ref, typ, val, inCell = attr(t, "r"), attr(t, "t"), "", true
			case "v", "t":
				if inCell {
					var s string
					if err := d.DecodeElement(&s, &t); err != nil {
						return nil, err
					}
					val += s
				}
			}
		case xml.EndElement:
			if t.Name.Local != "c" {
				continue
			}
			inCell = false
			if typ == "s" {
				if i, err := strconv.Atoi(val); err == nil && i >= 0 && i < len(shared) {
					val = shared[i]
				}
			}
			col := columnIndex(ref)
			if col < 0 {
				col = len(grid[rowNo])
			}
			if grid[rowNo] == nil {
				grid[rowNo] = map[int]string{}
			}
			grid[rowNo][col] = val
			maxCol = max(maxCol, col)
		}
	}
	var rowNums []int
	for r := range grid {
		rowNums = append(rowNums, r)
	}
	sort.Ints(rowNums)
	var rows [][]string
	for _, r := range rowNums {
		row := make([]string, maxCol+1)
		for col, v := range grid[r] {
			row[col] = v
		}
		rows = append(rows, row)
	}
	return rows, nil
}

func columnIndex(ref string) int {
	m := cellColumn().FindString(ref)
	if m == "" {
		return -1
	}
	n := 0
	for _, ch := range m {
		n = n*26 + int(ch-'A'+1)
	}
	return n - 1
}

// pptxToMarkdown renders each slide as a numbered comment followed by its
// title ("# "), text boxes, tables and picture placeholders.
func pptxToMarkdown(o ooxml) (string, error) {
	rels := o.rels("ppt/presentation.xml")
	d, c, err := o.decoder("ppt/presentation.xml")
	if err != nil {
		return "", err
	}
	var slides []string
	for {
		tok, err := d.Token()
		if err != nil {
			break
		}
		if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "sldId" {
			slides = append(slides, rels[relID(se)])
		}
	}
	c.Close()
	var md strings.Builder
	for i, part := range slides {
		fmt.Fprintf(&md, "\n\n<!-- Slide number: %d -->\n", i+1)
		body, err := o.slideMarkdown(part)
		if err != nil {
			return "", err
		}
		md.WriteString(body)
		s := strings.TrimSpace(md.String())
		md.Reset()
		md.WriteString(s)
	}
	return strings.TrimSpace(md.String()), nil
}

func (o ooxml) slideMarkdown(part string) (string, error) {
	d, c, err := o.decoder(part)
	if err != nil {
		return "", err
	}
	defer c.Close()
	var out strings.Builder
	var text, para strings.Builder
	var isTitle bool
	var table [][]string
	var row []string
	var picName, picDescr string
	inShape, inTable, inPic := false, false, false
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return "", fmt.Errorf("parse %s: %w", part, err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			switch t.Name.Local {
			case "sp":
				inShape, isTitle = true, false
				text.Reset()
			case "ph":
				if ty := attr(t, "type"); ty == "title" || ty == "ctrTitle" {
					isTitle = true
				}
			case "pic":
				inPic, picName, picDescr = true, "", ""
			case "cNvPr":
				if inPic {
					picName, picDescr = attr(t, "name"), attr(t, "descr")
				}
			case "tbl":
				inTable, table = true, nil
			case "tr":
				row = nil
			case "p":
				para.Reset()
			case "br":
				para.WriteString("\n")
			case "t":
				var s string
				if err := d.DecodeElement(&s, &t); err != nil {
					return "", err
				}
				para.WriteString(s)
			}
		case xml.EndElement:
			switch t.Name.Local {
			case "p":
				if text.Len() > 0 {
					text.WriteString("\n")
				}
				text.WriteString(para.String())
			case "tc":
				row = append(row, text.String())
				text.Reset()
			case "tr":
				table = append(table, row)
			case "tbl":
				inTable = false
				out.WriteString("\n" + markdownTable(table) + "\n")
				text.Reset()
			case "sp":
				if inShape && !inTable {
					if isTitle {
						out.WriteString("# " + strings.TrimLeft(text.String(), " \t\n") + "\n")
					} else {
						out.WriteString(text.String() + "\n")
					}
				}
				inShape = false
				text.Reset()
			case "pic":
				inPic = false
				alt := picDescr
				if alt == "" {
					alt = picName
				}
				out.WriteString("\n![" + alt + "](" + nonWord().ReplaceAllString(picName, "") + ".jpg)\n")
			}
		}
	}
	return out.String(), nil
}

var nonWord = lazyRegexp(`\W`)

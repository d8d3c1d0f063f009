package browser

import (
	"math"
	"strings"

	"github.com/chromedp/cdproto/domsnapshot"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// pageSnapshot is what the observation needs from one DOMSnapshot of a page
// and its in-process iframes.
type pageSnapshot struct {
	snap *domsnapshot.CaptureSnapshotResult
	// bidByBackend maps backend DOM node ids to bids.
	bidByBackend map[int64]string
	// frameByBackend maps the backend node id of an iframe element to the
	// frame id of its document.
	frameByBackend map[int64]string
	// frames are the frame ids of the documents, the main frame first.
	frames []string
	// props are the extra element properties by bid.
	props map[string]elementProps
}

// elementProps is BrowserGym's extra_element_properties entry.
type elementProps struct {
	Visibility float64
	BBox       []float64 // x, y, width, height in the viewport; nil when not rendered
	Clickable  bool
	SetOfMarks bool
}

func (s *pageSnapshot) str(i int64) string {
	if i < 0 || int(i) >= len(s.snap.Strings) {
		return ""
	}
	return s.snap.Strings[i]
}

// newPageSnapshot indexes a snapshot. som lists the bids flagged for
// set-of-marks; vw and vh are the viewport size.
func newPageSnapshot(snap *domsnapshot.CaptureSnapshotResult, som []string, vw, vh float64) *pageSnapshot {
	s := &pageSnapshot{
		snap:           snap,
		bidByBackend:   map[int64]string{},
		frameByBackend: map[int64]string{},
		props:          map[string]elementProps{},
	}
	inSom := make(map[string]bool, len(som))
	for _, b := range som {
		inSom[b] = true
	}
	// Absolute position of each document: its iframe's position in the
	// parent, minus its own scroll offset. Parents come before children.
	type pos struct{ x, y float64 }
	abs := make([]pos, len(snap.Documents))
	parentOf := map[int]struct {
		doc  int
		node int64
	}{}
	for di, doc := range snap.Documents {
		s.frames = append(s.frames, s.str(int64(doc.FrameID)))
		if cdi := doc.Nodes.ContentDocumentIndex; cdi != nil {
			for k, node := range cdi.Index {
				child := int(cdi.Value[k])
				parentOf[child] = struct {
					doc  int
					node int64
				}{di, node}
				if child < len(snap.Documents) {
					s.frameByBackend[int64(doc.Nodes.BackendNodeID[node])] = s.str(int64(snap.Documents[child].FrameID))
				}
			}
		}
	}
	for di, doc := range snap.Documents {
		var px, py float64
		if p, ok := parentOf[di]; ok && p.doc < di {
			lay := snap.Documents[p.doc].Layout
			for li, ni := range lay.NodeIndex {
				if ni == p.node && len(lay.Bounds[li]) >= 2 {
					px = abs[p.doc].x + lay.Bounds[li][0]
					py = abs[p.doc].y + lay.Bounds[li][1]
					break
				}
			}
		}
		abs[di] = pos{px - doc.ScrollOffsetX, py - doc.ScrollOffsetY}

		nodes := doc.Nodes
		bids := make([]string, len(nodes.ParentIndex))
		for ni, attrs := range nodes.Attributes {
			for k := 0; k+1 < len(attrs); k += 2 {
				if s.str(attrs[k]) == "bid" {
					bids[ni] = s.str(attrs[k+1])
					s.bidByBackend[int64(nodes.BackendNodeID[ni])] = bids[ni]
				}
			}
		}
		clickable := map[int64]bool{}
		if nodes.IsClickable != nil {
			for _, ni := range nodes.IsClickable.Index {
				clickable[ni] = true
			}
		}
		bbox := map[int64][]float64{}
		lay := doc.Layout
		for li, ni := range lay.NodeIndex {
			if li >= len(lay.Bounds) || len(lay.Bounds[li]) < 4 {
				continue
			}
			if li < len(lay.ClientRects) && len(lay.ClientRects[li]) == 0 {
				continue // not rendered
			}
			b := lay.Bounds[li]
			bbox[ni] = []float64{b[0] + abs[di].x, b[1] + abs[di].y, b[2], b[3]}
		}
		for ni, bid := range bids {
			if bid == "" {
				continue
			}
			box := bbox[int64(ni)]
			s.props[bid] = elementProps{
				Visibility: visibility(box, vw, vh),
				BBox:       box,
				Clickable:  clickable[int64(ni)],
				SetOfMarks: inSom[bid],
			}
		}
	}
	return s
}

// visibility is the share of the box inside the viewport, rounded to two
// decimals like BrowserGym's intersection ratios.
func visibility(box []float64, vw, vh float64) float64 {
	if box == nil {
		return 0
	}
	x, y, w, h := box[0], box[1], box[2], box[3]
	ix := math.Min(x+w, vw) - math.Max(x, 0)
	iy := math.Min(y+h, vh) - math.Max(y, 0)
	if ix < 0 || iy < 0 {
		return 0
	}
	if w*h == 0 {
		return 1
	}
	return math.Round(ix*iy/(w*h)*100) / 100
}

// extraProperties returns the props in the JSON shape of BrowserGym's
// extra_element_properties.
func (s *pageSnapshot) extraProperties() map[string]any {
	out := make(map[string]any, len(s.props))
	for bid, p := range s.props {
		var box any
		if p.BBox != nil {
			box = p.BBox
		}
		out[bid] = map[string]any{
			"visibility":   p.Visibility,
			"bbox":         box,
			"clickable":    p.Clickable,
			"set_of_marks": p.SetOfMarks,
		}
	}
	return out
}

// skippedTags never reach the Markdown.
var skippedTags = map[string]bool{"head": true, "script": true, "style": true, "noscript": true, "template": true}

// htmlDocument rebuilds the page, with the content of same-process iframes
// in place of the iframe elements, as an HTML tree for the Markdown
// converter.
func (s *pageSnapshot) htmlDocument() *html.Node {
	root := &html.Node{Type: html.DocumentNode}
	if len(s.snap.Documents) > 0 {
		s.appendDocument(root, 0, 0)
	}
	return root
}

func (s *pageSnapshot) appendDocument(parent *html.Node, di, depth int) {
	if depth > 16 {
		return
	}
	nodes := s.snap.Documents[di].Nodes
	children := make([][]int, len(nodes.ParentIndex))
	for i, p := range nodes.ParentIndex {
		if p >= 0 && int(p) < len(children) {
			children[p] = append(children[p], i)
		}
	}
	subdoc := map[int]int{}
	if cdi := nodes.ContentDocumentIndex; cdi != nil {
		for k, ni := range cdi.Index {
			subdoc[int(ni)] = int(cdi.Value[k])
		}
	}
	var build func(parent *html.Node, i int, textAllowed bool)
	build = func(parent *html.Node, i int, textAllowed bool) {
		switch nodes.NodeType[i] {
		case 3, 4: // text, CDATA
			if textAllowed {
				parent.AppendChild(&html.Node{Type: html.TextNode, Data: s.str(int64(nodes.NodeValue[i]))})
			}
			return
		case 1: // element
		default: // documents, fragments (shadow roots), doctypes, comments: transparent
			for _, c := range children[i] {
				build(parent, c, false)
			}
			return
		}
		name := strings.ToLower(s.str(int64(nodes.NodeName[i])))
		if skippedTags[name] {
			return
		}
		if sd, ok := subdoc[i]; ok {
			// An iframe: its document's content takes its place.
			div := &html.Node{Type: html.ElementNode, Data: "div", DataAtom: atom.Div}
			parent.AppendChild(div)
			if sd > di && sd < len(s.snap.Documents) {
				s.appendDocument(div, sd, depth+1)
			}
			return
		}
		if depth > 0 && (name == "html" || name == "body") {
			name = "div"
		}
		el := &html.Node{Type: html.ElementNode, Data: name, DataAtom: atom.Lookup([]byte(name))}
		attrs := nodes.Attributes[i]
		for k := 0; k+1 < len(attrs); k += 2 {
			el.Attr = append(el.Attr, html.Attribute{Key: s.str(attrs[k]), Val: s.str(attrs[k+1])})
		}
		parent.AppendChild(el)
		for _, c := range children[i] {
			build(el, c, true)
		}
	}
	for i, p := range nodes.ParentIndex {
		if p < 0 {
			build(parent, i, false)
		}
	}
}

package browser

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/actionserver/actionserver/internal/pyfmt"
)

// axValue is a CDP AXValue. Value is the raw JSON of its "value" member,
// nil when the member is absent.
type axValue struct {
	Type  string          `json:"type"`
	Value json.RawMessage `json:"value"`
}

type axProperty struct {
	Name  string   `json:"name"`
	Value *axValue `json:"value"`
}

// axNode is a CDP AXNode with the bid that the page marking gave its element.
type axNode struct {
	NodeID           string       `json:"nodeId"`
	Ignored          bool         `json:"ignored"`
	Role             *axValue     `json:"role"`
	Name             *axValue     `json:"name"`
	Value            *axValue     `json:"value"`
	Properties       []axProperty `json:"properties"`
	ChildIDs         []string     `json:"childIds"`
	BackendDOMNodeID int64        `json:"backendDOMNodeId"`
	FrameID          string       `json:"frameId"`

	raw json.RawMessage
	bid string
	key string // unique over all frames
}

// axTree is the accessibility tree of a page with its same-process iframes
// merged in, as BrowserGym builds it.
type axTree struct {
	nodes []*axNode // the main frame's root first
	byKey map[string]*axNode
	// children by node key, including the root of an iframe's tree under
	// the iframe node.
	children map[string][]string
}

// decodeJSON decodes raw JSON with numbers kept as json.Number, so that
// integers print as integers.
func decodeJSON(raw []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

func (v *axValue) present() bool { return v != nil && v.Value != nil }

// decoded returns the Go value of v's "value" member.
func (v *axValue) decoded() any {
	if !v.present() {
		return nil
	}
	out, err := decodeJSON(v.Value)
	if err != nil {
		return string(v.Value)
	}
	return out
}

// text returns the "value" member as a string.
func (v *axValue) text() string {
	switch d := v.decoded().(type) {
	case string:
		return d
	case nil:
		return ""
	default:
		return pyfmt.Repr(d)
	}
}

// buildAXTree merges the per-frame trees (main frame first) and attaches bids
// from the snapshot.
func buildAXTree(frameTrees [][]json.RawMessage, snap *pageSnapshot) (*axTree, error) {
	t := &axTree{byKey: map[string]*axNode{}, children: map[string][]string{}}
	rootOfFrame := map[string]string{}
	for fi, raws := range frameTrees {
		for i, raw := range raws {
			n := &axNode{raw: raw}
			if err := json.Unmarshal(raw, n); err != nil {
				return nil, fmt.Errorf("decode accessibility node: %w", err)
			}
			n.key = fmt.Sprintf("%d:%s", fi, n.NodeID)
			if n.BackendDOMNodeID != 0 {
				n.bid = snap.bidByBackend[n.BackendDOMNodeID]
			}
			if i == 0 {
				rootOfFrame[n.FrameID] = n.key
			}
			t.nodes = append(t.nodes, n)
			t.byKey[n.key] = n
		}
	}
	for _, n := range t.nodes {
		prefix := n.key[:strings.IndexByte(n.key, ':')+1]
		for _, c := range n.ChildIDs {
			t.children[n.key] = append(t.children[n.key], prefix+c)
		}
		if n.Role.text() == "Iframe" {
			if fid, ok := snap.frameByBackend[n.BackendDOMNodeID]; ok {
				if root, ok := rootOfFrame[fid]; ok && root != n.key {
					t.children[n.key] = append(t.children[n.key], root)
				}
			}
		}
	}
	return t, nil
}

// object returns the merged tree in CDP's JSON shape with BrowserGym's
// "browsergym_id" member, for the axtree_object field.
func (t *axTree) object() map[string]any {
	nodes := make([]any, 0, len(t.nodes))
	for _, n := range t.nodes {
		v, err := decodeJSON(n.raw)
		if err != nil {
			continue
		}
		m, ok := v.(map[string]any)
		if !ok {
			continue
		}
		if n.bid != "" {
			m["browsergym_id"] = n.bid
		}
		stripDescriptionMark(m)
		if extra := t.children[n.key]; len(extra) > len(n.ChildIDs) {
			ids := append([]any{}, toAny(n.ChildIDs)...)
			for _, k := range extra[len(n.ChildIDs):] {
				ids = append(ids, t.byKey[k].NodeID)
			}
			m["childIds"] = ids
		}
		nodes = append(nodes, m)
	}
	return map[string]any{"nodes": nodes}
}

// descriptionMark matches the bid that the page marking puts in the
// aria-description of canvases, with the space that may follow it.
var descriptionMark = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^browsergym_id_[a-zA-Z0-9]+\s?`) })

// stripDescriptionMark takes the page marking's bid out of a node's
// description and drops the description when nothing else is left, as
// BrowserGym does with the bids it puts there.
func stripDescriptionMark(node map[string]any) {
	desc, ok := node["description"].(map[string]any)
	if !ok {
		return
	}
	s, ok := desc["value"].(string)
	if !ok || !descriptionMark().MatchString(s) {
		return
	}
	if rest := descriptionMark().ReplaceAllString(s, ""); rest != "" {
		desc["value"] = rest
	} else {
		delete(node, "description")
	}
}

func toAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// Roles never printed. InlineTextBox repeats its StaticText parent; the
// Chromium that BrowserGym was built on did not report it.
var ignoredRoles = map[string]bool{"LineBreak": true, "InlineTextBox": true}

// Properties never printed, as in BrowserGym.
var ignoredProperties = map[string]bool{
	"editable": true, "readonly": true, "level": true, "settable": true,
	"multiline": true, "invalid": true, "focusable": true,
}

// flatten renders the tree as BrowserGym's flatten_axtree_to_str does with
// OpenHands' settings (clickable marks on, generic nodes kept, nothing
// filtered): one node per line, "[bid] role 'name'", its value and
// properties, indented by tabs.
func (t *axTree) flatten(props map[string]elementProps) string {
	if len(t.nodes) == 0 {
		return ""
	}
	var b strings.Builder
	t.dfs(&b, props, t.nodes[0], 0, "", map[string]bool{})
	return b.String()
}

func (t *axTree) dfs(b *strings.Builder, props map[string]elementProps, n *axNode, depth int, parentName string, visiting map[string]bool) {
	if visiting[n.key] {
		return
	}
	visiting[n.key] = true
	defer delete(visiting, n.key)

	role := n.Role.text()
	skip := false
	name := ""
	switch {
	case ignoredRoles[role], n.Name == nil:
		skip = true
	default:
		name = n.Name.text()
		var attrs []string
		for _, p := range n.Properties {
			if !p.Value.present() || ignoredProperties[p.Name] {
				continue
			}
			v := p.Value.decoded()
			switch p.Name {
			case "required", "focused", "atomic":
				if truthy(v) {
					attrs = append(attrs, p.Name)
				}
			default:
				attrs = append(attrs, p.Name+"="+pyfmt.Repr(v))
			}
		}
		if role == "StaticText" {
			skip = strings.Contains(parentName, name)
		} else if p, ok := props[n.bid]; ok && n.bid != "" && p.Clickable {
			attrs = append([]string{"clickable"}, attrs...)
		}
		if !skip {
			line := role
			if role != "generic" || name != "" {
				line += " " + pyfmt.Repr(strings.TrimSpace(name))
			}
			if n.bid != "" {
				line = "[" + n.bid + "] " + line
			}
			if n.Value.present() {
				line += " value=" + pyfmt.Repr(n.Value.decoded())
			}
			for _, a := range attrs {
				line += ", " + a
			}
			if b.Len() > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(strings.Repeat("\t", depth))
			b.WriteString(line)
		}
	}
	childDepth := depth + 1
	if skip {
		childDepth = depth
	}
	for _, ck := range t.children[n.key] {
		c, ok := t.byKey[ck]
		if !ok || c == n {
			continue
		}
		t.dfs(b, props, c, childDepth, name, visiting)
	}
}

// truthy is Python's truth value of a decoded JSON value.
func truthy(v any) bool {
	switch v := v.(type) {
	case nil:
		return false
	case bool:
		return v
	case string:
		return v != ""
	case json.Number:
		f, err := v.Float64()
		return err != nil || f != 0
	case []any:
		return len(v) > 0
	case map[string]any:
		return len(v) > 0
	default:
		return true
	}
}

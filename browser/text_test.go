package browser

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// axJSON is a small accessibility tree in CDP's shape: a root, an ignored
// wrapper, a heading whose text repeats its name, a link with a url, a
// focused textbox with a value, a required checkbox, a line break and an
// unnamed generic with a text child.
const axJSON = `[
 {"nodeId":"1","role":{"type":"internalRole","value":"RootWebArea"},"name":{"type":"computedString","value":"Title"},
  "properties":[{"name":"focusable","value":{"type":"booleanOrUndefined","value":true}},{"name":"focused","value":{"type":"booleanOrUndefined","value":true}}],
  "childIds":["2"],"backendDOMNodeId":1,"frameId":"F"},
 {"nodeId":"2","ignored":true,"role":{"type":"role","value":"none"},"childIds":["3","5","7","8","9","10"],"backendDOMNodeId":2},
 {"nodeId":"3","role":{"type":"role","value":"heading"},"name":{"type":"computedString","value":"Hello"},
  "properties":[{"name":"level","value":{"type":"integer","value":1}}],"childIds":["4"],"backendDOMNodeId":3},
 {"nodeId":"4","role":{"type":"internalRole","value":"StaticText"},"name":{"type":"computedString","value":"Hello"},"childIds":[],"backendDOMNodeId":4},
 {"nodeId":"5","role":{"type":"role","value":"link"},"name":{"type":"computedString","value":" Docs "},
  "properties":[{"name":"url","value":{"type":"string","value":"http://x/docs"}}],"childIds":["6"],"backendDOMNodeId":5},
 {"nodeId":"6","role":{"type":"internalRole","value":"StaticText"},"name":{"type":"computedString","value":"Docs and more"},"childIds":[],"backendDOMNodeId":6},
 {"nodeId":"7","role":{"type":"role","value":"textbox"},"name":{"type":"computedString","value":"Name"},"value":{"type":"string","value":"it's"},
  "properties":[{"name":"focused","value":{"type":"booleanOrUndefined","value":true}},{"name":"editable","value":{"type":"token","value":"plaintext"}},{"name":"labelledby","value":{"type":"nodeList","relatedNodes":[]}}],"childIds":[],"backendDOMNodeId":7},
 {"nodeId":"8","role":{"type":"role","value":"checkbox"},"name":{"type":"computedString","value":"Agree"},
  "properties":[{"name":"checked","value":{"type":"tristate","value":"false"}},{"name":"required","value":{"type":"boolean","value":true}},{"name":"expanded","value":{"type":"booleanOrUndefined","value":false}}],"childIds":[],"backendDOMNodeId":8},
 {"nodeId":"9","role":{"type":"internalRole","value":"LineBreak"},"name":{"type":"computedString","value":"\n"},"childIds":[],"backendDOMNodeId":9},
 {"nodeId":"10","role":{"type":"role","value":"generic"},"name":{"type":"computedString","value":""},"childIds":["11"],"backendDOMNodeId":10},
 {"nodeId":"11","role":{"type":"internalRole","value":"StaticText"},"name":{"type":"computedString","value":"tail"},"childIds":["12"],"backendDOMNodeId":11},
 {"nodeId":"12","role":{"type":"internalRole","value":"InlineTextBox"},"name":{"type":"computedString","value":"tail"},"childIds":[]}
]`

func TestFlatten_RendersBrowserGymFormat(t *testing.T) {
	var raws []json.RawMessage
	require.NoError(t, json.Unmarshal([]byte(axJSON), &raws))
	snap := &pageSnapshot{
		bidByBackend: map[int64]string{3: "10", 5: "11", 7: "12", 8: "13", 10: "14"},
		props:        map[string]elementProps{"11": {Clickable: true}, "12": {Clickable: true}},
	}
	tree, err := buildAXTree([][]json.RawMessage{raws}, snap)
	require.NoError(t, err)

	want := "RootWebArea 'Title', focused\n" +
		"\t[10] heading 'Hello'\n" +
		"\t[11] link 'Docs', clickable, url='http://x/docs'\n" +
		"\t\tStaticText 'Docs and more'\n" +
		"\t[12] textbox 'Name' value=\"it's\", clickable, focused\n" +
		"\t[13] checkbox 'Agree', checked='false', required, expanded=False\n" +
		"\t[14] generic\n" +
		"\t\tStaticText 'tail'"
	assert.Equal(t, want, tree.flatten(snap.props))

	obj := tree.object()
	nodes := obj["nodes"].([]any)
	require.Len(t, nodes, 12)
	assert.Equal(t, "10", nodes[2].(map[string]any)["browsergym_id"])
}

func TestContentBuilders_MatchOpenHandsTexts(t *testing.T) {
	assert.Equal(t,
		"[Current URL: http://h/]\n============== BEGIN webpage content ==============\n# T\n============== END webpage content ==============\n",
		BrowseText("http://h/", "", "# T"))
	assert.Equal(t,
		"[Current URL: http://h/]\n================ BEGIN error message ===============\nThe following error occurred when trying to visit the URL:\nboom\n================ END error message ===============\n============== BEGIN webpage content ==============\nboom\n============== END webpage content ==============\n",
		BrowseText("http://h/", "boom", "boom"))
	assert.Equal(t,
		"[Current URL: http://h/]\n[Focused element bid: 5]\n[Screenshot saved to: /w/s.png]\n\n[Action executed successfully.]\n"+
			"Accessibility tree of the COMPLETE webpage:\nNote: [bid] is the unique alpha-numeric identifier at the beginning of lines for each element in the AXTree. Always use bid to refer to elements in your actions.\n"+
			"============== BEGIN accessibility tree ==============\nRootWebArea 'T'\n============== END accessibility tree ==============\n",
		InteractiveText("http://h/", "5", "/w/s.png", "", "RootWebArea 'T'"))
	assert.Equal(t,
		"[Current URL: http://h/]\n[Focused element bid: ]\n\n================ BEGIN error message ===============\nThe following error occurred when executing the last action:\nValueError: x\n================ END error message ===============\n"+
			"Accessibility tree of the COMPLETE webpage:\nNote: [bid] is the unique alpha-numeric identifier at the beginning of lines for each element in the AXTree. Always use bid to refer to elements in your actions.\n"+
			"============== BEGIN accessibility tree ==============\n\n============== END accessibility tree ==============\n",
		InteractiveText("http://h/", "", "", "ValueError: x", ""))
}

func TestFailureObservation_HasOpenHandsDefaults(t *testing.T) {
	o := FailureObservation(TriggerBrowseInteractive, "ignored", TimeoutMessage)
	assert.True(t, o.Error)
	assert.Equal(t, "", o.URL)
	assert.Equal(t, -1, o.ActivePageIndex)
	assert.Equal(t, TimeoutMessage, o.LastBrowserActionError)
	assert.Equal(t, "[Current URL: ]\n[Focused element bid: ]\n\n================ BEGIN error message ===============\nThe following error occurred when executing the last action:\nBrowser environment took too long to respond.\n================ END error message ===============\n\n[Error encountered when processing the accessibility tree: 'nodes']", o.Content)

	o = FailureObservation(TriggerBrowse, "http://h/", "boom")
	assert.Equal(t, "http://h/", o.URL)
	assert.Equal(t, BrowseText("http://h/", "boom", "boom"), o.Content)
	assert.Empty(t, o.Screenshot)
	assert.Equal(t, "Visited http://h/", o.Message())
}

func TestStripDescriptionMark_LeavesOnlyThePagesDescription(t *testing.T) {
	tests := []struct {
		desc any
		want any // nil: no description left
	}{
		{"browsergym_id_12", nil},
		{"browsergym_id_aB3 ", nil},
		{"browsergym_id_12 a chart", "a chart"},
		{"a chart", "a chart"},
		{"browsergym_id_ alone", "browsergym_id_ alone"},
		{true, true},
	}
	for _, tt := range tests {
		node := map[string]any{"description": map[string]any{"type": "computedString", "value": tt.desc}}
		stripDescriptionMark(node)
		if tt.want == nil {
			assert.NotContains(t, node, "description", tt.desc)
			continue
		}
		assert.Equal(t, tt.want, node["description"].(map[string]any)["value"], tt.desc)
	}
	node := map[string]any{"role": "x"}
	stripDescriptionMark(node)
	assert.Equal(t, map[string]any{"role": "x"}, node)
}

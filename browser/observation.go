package browser

import "strings"

// Trigger names: the action type that produced an observation, OpenHands'
// trigger_by_action.
const (
	TriggerBrowse            = "browse"
	TriggerBrowseInteractive = "browse_interactive"
)

// Observation is OpenHands' browse observation (§5, §11.3). Its fields are
// the wire extras, which the executor copies into the event; Content is the
// agent-facing text, already built.
type Observation struct {
	Content         string
	URL             string
	TriggerByAction string
	// Screenshot is a data:image/png;base64 URL, or "" on failure.
	Screenshot string
	// ScreenshotPath is where the PNG was saved; "" stands for null.
	ScreenshotPath string
	// SetOfMarks is the screenshot meant for set-of-marks prompting. It is
	// the plain screenshot: no boxes are drawn on it.
	SetOfMarks      string
	Error           bool
	GoalImageURLs   []string
	OpenPagesURLs   []string
	ActivePageIndex int
	// DOMObject is always empty, as in OpenHands.
	DOMObject map[string]any
	// AXTreeObject and ExtraElementProperties are filled only when the
	// action asked for return_axtree.
	AXTreeObject           map[string]any
	ExtraElementProperties map[string]any
	LastBrowserAction      string
	LastBrowserActionError string
	FocusedElementBID      string
	FilterVisibleOnly      bool

	// Download is set when a browse_interactive step downloaded a file:
	// the executor then returns the download observation instead of this one.
	Download *Download
}

// Message is the observation's UI message.
func (o *Observation) Message() string { return "Visited " + o.URL }

const (
	errorBegin = "================ BEGIN error message ===============\n"
	errorEnd   = "================ END error message ===============\n"
	pageBegin  = "============== BEGIN webpage content ==============\n"
	pageEnd    = "============== END webpage content ==============\n"
	axBegin    = "============== BEGIN accessibility tree ==============\n"
	axEnd      = "============== END accessibility tree ==============\n"
	axHeader   = "Accessibility tree of the COMPLETE webpage:\nNote: [bid] is the unique alpha-numeric identifier at the beginning of lines for each element in the AXTree. Always use bid to refer to elements in your actions.\n"
)

// BrowseText builds the agent text of a browse observation: the URL, the
// error block when errMsg is not empty, and the page as Markdown.
func BrowseText(url, errMsg, markdown string) string {
	var b strings.Builder
	b.WriteString("[Current URL: " + url + "]\n")
	if errMsg != "" {
		b.WriteString(errorBegin)
		b.WriteString("The following error occurred when trying to visit the URL:\n")
		b.WriteString(errMsg + "\n")
		b.WriteString(errorEnd)
	}
	b.WriteString(pageBegin)
	b.WriteString(markdown)
	b.WriteString("\n" + pageEnd)
	return b.String()
}

// InteractiveText builds the agent text of a browse_interactive observation:
// the URL, the focused element, the screenshot path when one was saved, the
// outcome of the last action and the accessibility tree text.
func InteractiveText(url, focusedBID, screenshotPath, errMsg, axtree string) string {
	var b strings.Builder
	b.WriteString(interactiveHead(url, focusedBID, screenshotPath, errMsg))
	b.WriteString(axHeader)
	b.WriteString(axBegin)
	b.WriteString(axtree + "\n")
	b.WriteString(axEnd)
	return b.String()
}

func interactiveHead(url, focusedBID, screenshotPath, errMsg string) string {
	var b strings.Builder
	b.WriteString("[Current URL: " + url + "]\n")
	b.WriteString("[Focused element bid: " + focusedBID + "]\n")
	if screenshotPath != "" {
		b.WriteString("[Screenshot saved to: " + screenshotPath + "]\n")
	}
	b.WriteString("\n")
	if errMsg != "" {
		b.WriteString(errorBegin)
		b.WriteString("The following error occurred when executing the last action:\n")
		b.WriteString(errMsg + "\n")
		b.WriteString(errorEnd)
	} else {
		b.WriteString("[Action executed successfully.]\n")
	}
	return b.String()
}

// noAXTreeNote is what OpenHands appends when a failed step has no
// accessibility tree: flattening the empty tree raises KeyError('nodes').
const noAXTreeNote = "\n[Error encountered when processing the accessibility tree: 'nodes']"

// FailureObservation is the observation of a step that could not run at all
// (§11.4): error set, no screenshot, the URL that was asked for a browse and
// none for an interactive step, and the message in the agent text.
func FailureObservation(trigger, url, msg string) *Observation {
	o := emptyObservation(trigger)
	o.Error = true
	o.LastBrowserActionError = msg
	if trigger == TriggerBrowse {
		o.URL = url
		o.Content = BrowseText(url, msg, msg)
	} else {
		o.Content = interactiveHead("", "", "", msg) + noAXTreeNote
	}
	return o
}

// emptyObservation has every field at its OpenHands default.
func emptyObservation(trigger string) *Observation {
	return &Observation{
		TriggerByAction:        trigger,
		GoalImageURLs:          []string{},
		OpenPagesURLs:          []string{},
		ActivePageIndex:        -1,
		DOMObject:              map[string]any{},
		AXTreeObject:           map[string]any{},
		ExtraElementProperties: map[string]any{},
	}
}

// Package browser runs OpenHands' two browser actions, browse and
// browse_interactive, on one headless Chromium driven by chromedp, and
// returns their observations with OpenHands' exact texts.
//
// # Lifecycle
//
// New returns a Browser; Chromium starts on the first action (or at once with
// Options.Eager, or with Start). It runs headless, in its own process group,
// with a throwaway profile, and is killed with all its children by Close. A
// Chromium that died is noticed at the next action and restarted; one that
// did not answer in time is probed at the next action and restarted if it
// still does not answer. With Options.Disabled every action fails with
// ErrUnavailable.
//
// # Actions
//
// Browse(ctx, url, returnAXTree) navigates the active page and returns the
// browse observation with the page as Markdown. Interact(ctx, code,
// returnAXTree) runs a BrowserGym action program (the language of package gym) such as
//
//	fill("12", "hello")
//	press("12", "Enter")
//
// and returns the browse_interactive observation with the accessibility tree
// text, in which every element has a stable bid. An action that fails does
// not fail the step: its error is in Observation.LastBrowserActionError and
// in the content. A step that downloads a file sets Observation.Download,
// which the executor turns into the download observation.
//
// The context bounds the step: Browse and Interact return by its deadline,
// with the failure form of the observation (FailureObservation) when the
// time ran out. A context without deadline gets DefaultStepTimeout.
//
// # Errors
//
// Browse and Interact return an error only when the browser cannot be used
// at all: ErrUnavailable (errors.Is), which the executor answers with the
// error observation whose content is UnavailableMessage. Everything else,
// including unreachable hosts and timeouts, is an Observation.
//
// # Files
//
// Screenshots are saved under <WorkDir>/.browser_screenshots/, downloads land
// in <WorkDir>/.downloads/ and are copied to <WorkDir>/file_<N><ext>.
//
// A Browser runs one action at a time; it is safe for concurrent use.
package browser

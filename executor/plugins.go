package executor

import (
	"github.com/actionserver/actionserver/plugins"
)

// PluginState is where a plugin is in its life. Front ends map it to
// their wire names.
type PluginState int

// The states of a plugin.
const (
	PluginStarting PluginState = iota
	PluginReady
	PluginFailed
	// PluginDisabled: it cannot run here; the status's Error says why.
	PluginDisabled
	// PluginRestarting: its process died; it is being restarted.
	PluginRestarting
)

// PluginStatus is one plugin's state.
type PluginStatus struct {
	Name  string
	State PluginState
	// Error says why the plugin failed, is disabled or is restarting.
	Error string
	// Port is the loopback port of the plugin's own server; 0 when none.
	Port int
}

// PluginStatuses reports the states of the executor's plugins, in start
// order ([] when there are none).
func (e *Executor) PluginStatuses() []PluginStatus { return PluginStatuses(e.opts.Plugins) }

// PluginStatuses reports the states of a set of plugins (nil: none), also
// while they start, before the executor that will own them exists.
func PluginStatuses(set *plugins.Set) []PluginStatus {
	sts := set.Statuses()
	out := make([]PluginStatus, len(sts))
	for i, st := range sts {
		out[i] = PluginStatus{Name: st.Name, State: pluginState(st.State), Error: st.Error, Port: st.Port}
	}
	return out
}

// pluginState is a plugin's state as the executor reports it, so a rename
// inside plugins/ cannot change what clients receive. A state it does not
// know is a failure: the plugin is not known to serve.
func pluginState(s plugins.State) PluginState {
	switch s {
	case plugins.StateStarting:
		return PluginStarting
	case plugins.StateReady:
		return PluginReady
	case plugins.StateDisabled:
		return PluginDisabled
	case plugins.StateRestarting:
		return PluginRestarting
	}
	return PluginFailed
}

// tokenHolder is what the vscode plugin offers: its connection token.
type tokenHolder interface {
	Token() *string
}

// VSCodeToken returns the VS Code server's connection token, or nil when
// the plugin is not loaded or is disabled.
func (e *Executor) VSCodeToken() *string {
	p, ok := e.opts.Plugins.Get("vscode")
	if !ok {
		return nil
	}
	th, ok := p.(tokenHolder)
	if !ok {
		return nil
	}
	return th.Token()
}

package executor

import (
	"github.com/actionserver/actionserver/api"
	"github.com/actionserver/actionserver/plugins"
)

// PluginStatuses reports the states of the executor's plugins, in start
// order ([] when there are none).
func (e *Executor) PluginStatuses() []api.PluginStatus { return PluginStatuses(e.opts.Plugins) }

// PluginStatuses reports the states of a set of plugins (nil: none), also
// while they start, before the executor that will own them exists.
func PluginStatuses(set *plugins.Set) []api.PluginStatus {
	sts := set.Statuses()
	out := make([]api.PluginStatus, len(sts))
	for i, st := range sts {
		out[i] = api.PluginStatus{Name: st.Name, State: pluginState(st.State), Error: st.Error, Port: st.Port}
	}
	return out
}

// pluginState names a plugin's state on the wire, so a rename inside
// plugins/ cannot change what clients receive.
func pluginState(s plugins.State) api.PluginState {
	switch s {
	case plugins.StateStarting:
		return api.PluginStarting
	case plugins.StateReady:
		return api.PluginReady
	case plugins.StateFailed:
		return api.PluginFailed
	case plugins.StateDisabled:
		return api.PluginDisabled
	case plugins.StateRestarting:
		return api.PluginRestarting
	}
	return api.PluginState(s)
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

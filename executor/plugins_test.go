package executor

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/actionserver/actionserver/plugins"
)

// statusPlugin only reports a state: what is under test is how the
// executor reports plugin states, not a plugin.
type statusPlugin struct{ st plugins.Status }

func (p statusPlugin) Name() string                             { return p.st.Name }
func (p statusPlugin) Start(context.Context, plugins.Env) error { return nil }
func (p statusPlugin) Stop(context.Context) error               { return nil }
func (p statusPlugin) Status() plugins.Status                   { return p.st }

func TestPluginStatuses_EveryState(t *testing.T) {
	states := []struct {
		in  plugins.State
		out PluginState
	}{
		{plugins.StateStarting, PluginStarting},
		{plugins.StateReady, PluginReady},
		{plugins.StateFailed, PluginFailed},
		{plugins.StateDisabled, PluginDisabled},
		{plugins.StateRestarting, PluginRestarting},
	}
	var reg plugins.Registry
	var names []string
	var want []PluginStatus
	for i, s := range states {
		st := plugins.Status{Name: string(s.in), State: s.in, Error: "why " + string(s.in), Port: 1000 + i}
		reg.Register(st.Name, func() plugins.Plugin { return statusPlugin{st} })
		names = append(names, st.Name)
		want = append(want, PluginStatus{Name: st.Name, State: s.out, Error: st.Error, Port: st.Port})
	}
	set, err := reg.New(names)
	require.NoError(t, err)
	assert.Equal(t, want, PluginStatuses(set))
	assert.Equal(t, []PluginStatus{}, PluginStatuses(nil), "none is an empty list, not null")
}

package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"time"

	"github.com/actionserver/actionserver/plugins"
	"github.com/actionserver/actionserver/plugins/agentskills"
	"github.com/actionserver/actionserver/plugins/jupyter"
	"github.com/actionserver/actionserver/plugins/vscode"
)

// defaultPluginTimeout bounds plugin start-up unless INIT_PLUGIN_TIMEOUT
// says otherwise.
const defaultPluginTimeout = 120 * time.Second

// maxPluginTimeout is the largest INIT_PLUGIN_TIMEOUT taken; a larger one
// is a mistake rather than a wish to wait for years (and would overflow).
const maxPluginTimeout = 30 * 24 * time.Hour

// pluginRegistry lists the plugins this server can start. host is the
// server's listen address: VS Code listens where the API does, since the
// host reaches both the same way.
func pluginRegistry(host string) *plugins.Registry {
	var r plugins.Registry
	r.Register(jupyter.Name, jupyter.New)
	r.Register(agentskills.Name, agentskills.New)
	r.Register(vscode.Name, func() plugins.Plugin { return vscode.NewPlugin(vscode.Options{Host: host}) })
	return &r
}

// initCellAdder is the jupyter plugin's hook for cells that set up every
// kernel; skillsImporter is agent_skills' cell that loads its helpers.
type (
	initCellAdder interface {
		AddInitCell(context.Context, string) error
	}
	skillsImporter interface{ ImportCell() string }
)

// pluginTimeout is how long plugins may take to start: INIT_PLUGIN_TIMEOUT
// in seconds (fractions allowed), given as value, or the default when it
// is empty.
func pluginTimeout(value string) (time.Duration, error) {
	if value == "" {
		return defaultPluginTimeout, nil
	}
	secs, err := strconv.ParseFloat(value, 64)
	if err != nil || !(secs > 0) || secs > maxPluginTimeout.Seconds() {
		return 0, fmt.Errorf("INIT_PLUGIN_TIMEOUT=%q is not a positive number of seconds", value)
	}
	return time.Duration(secs * float64(time.Second)), nil
}

// startPlugins starts the plugins named on the command line under
// INIT_PLUGIN_TIMEOUT and, when both are loaded, imports the agent skills
// into the kernel.
func startPlugins(ctx context.Context, set *plugins.Set, env plugins.Env, log *slog.Logger) error {
	timeout, err := pluginTimeout(os.Getenv("INIT_PLUGIN_TIMEOUT"))
	if err != nil {
		return err
	}
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	// The deadline is the operator's setting: say so, rather than leave a
	// bare "context deadline exceeded" from somewhere inside a plugin.
	timedOut := func(err error) error {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) && parent.Err() == nil {
			return fmt.Errorf("plugins not ready within INIT_PLUGIN_TIMEOUT (%v): %w", timeout, err)
		}
		return err
	}
	start := time.Now()
	if err := set.Start(ctx, env); err != nil {
		return timedOut(err)
	}
	jp, okJ := set.Get(jupyter.Name)
	sk, okS := set.Get(agentskills.Name)
	if okJ && okS {
		adder, ok1 := jp.(initCellAdder)
		imp, ok2 := sk.(skillsImporter)
		if ok1 && ok2 {
			if err := adder.AddInitCell(ctx, imp.ImportCell()); err != nil {
				set.Stop(context.WithoutCancel(ctx))
				return timedOut(fmt.Errorf("load agent skills into the kernel: %w", err))
			}
		}
	}
	for _, st := range set.Statuses() {
		log.Info("plugin started", "plugin", st.Name, "state", st.State, "error", st.Error, "port", st.Port)
	}
	log.Info("plugins ready", "took", time.Since(start))
	return nil
}

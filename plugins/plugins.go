// Package plugins is how the server gains optional capabilities (Jupyter,
// VS Code, agent skills): a Plugin interface, a Registry of name →
// factory, and the started Set. Each plugin lives in its own sub-package;
// adding one means adding that package and one Register line where the
// server is wired.
package plugins

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"syscall"
	"time"
)

// State is where a plugin is in its life.
type State string

// Plugin states.
const (
	StateStarting   State = "starting"
	StateReady      State = "ready"
	StateFailed     State = "failed"
	StateDisabled   State = "disabled"   // cannot run here; Error says why
	StateRestarting State = "restarting" // its process died; being restarted
)

// Status is a plugin's state as /server_info reports it.
type Status struct {
	Name  string `json:"name"`
	State State  `json:"state"`
	// Error says why the plugin failed, is disabled or is restarting.
	Error string `json:"error,omitempty"`
	// Port is the loopback port of the plugin's own server, if any.
	Port int `json:"port,omitempty"`
}

// Env is what plugins need to know about the sandbox.
type Env struct {
	// Username, UID, GID and Home describe the sandbox user that plugin
	// processes run as.
	Username string
	UID, GID int
	Home     string
	// Credential switches a child process to the sandbox user; nil runs
	// it as the server's user.
	Credential *syscall.Credential
	// WorkDir is the workspace.
	WorkDir string
	// Environ is the base environment of plugin processes.
	Environ []string
	// Logger receives diagnostics; never nil once passed to Start.
	Logger *slog.Logger
}

// Plugin is one optional capability.
type Plugin interface {
	// Name is the name --plugins uses.
	Name() string
	// Start makes the plugin ready or returns why it cannot be; a plugin
	// that cannot run here but should not stop the server returns nil and
	// reports StateDisabled.
	Start(ctx context.Context, env Env) error
	// Stop ends everything the plugin started.
	Stop(ctx context.Context) error
	// Status reports the plugin's state. It is called before and while
	// Start runs (a plugin not started yet is StateStarting), so it must
	// not wait for Start.
	Status() Status
}

// stopGrace bounds stopping the plugins that did start when another failed.
const stopGrace = 5 * time.Second

// Factory makes a plugin that has not started.
type Factory func() Plugin

// Registry maps plugin names to factories. The zero value is empty and
// ready to use.
type Registry struct {
	factories map[string]Factory
}

// Register adds a plugin; a second registration of a name replaces it.
func (r *Registry) Register(name string, f Factory) {
	if r.factories == nil {
		r.factories = map[string]Factory{}
	}
	r.factories[name] = f
}

// Names returns the registered names, sorted.
func (r *Registry) Names() []string {
	names := make([]string, 0, len(r.factories))
	for n := range r.factories {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// NotFoundError is a plugin name nobody registered.
type NotFoundError struct{ Name string }

func (e *NotFoundError) Error() string { return fmt.Sprintf("Plugin %s not found", e.Name) }

// Check returns a *NotFoundError for the first unknown name.
func (r *Registry) Check(names []string) error {
	for _, n := range names {
		if _, ok := r.factories[n]; !ok {
			return &NotFoundError{Name: n}
		}
	}
	return nil
}

// New makes the named plugins, not started yet, in the order named;
// duplicate names make one plugin. Unknown names fail with a
// *NotFoundError and make nothing. Making a set before starting it lets a
// server report the plugins as starting.
func (r *Registry) New(names []string) (*Set, error) {
	if err := r.Check(names); err != nil {
		return nil, err
	}
	s := &Set{byName: map[string]Plugin{}}
	for _, n := range names {
		if _, dup := s.byName[n]; dup {
			continue
		}
		s.byName[n] = r.factories[n]()
		s.order = append(s.order, n)
	}
	return s, nil
}

// Start makes the named plugins and starts them; see New and Set.Start.
func (r *Registry) Start(ctx context.Context, names []string, env Env) (*Set, error) {
	s, err := r.New(names)
	if err != nil {
		return nil, err
	}
	if err := s.Start(ctx, env); err != nil {
		return nil, err
	}
	return s, nil
}

// Start starts the set's plugins concurrently and returns when all are
// ready (or disabled) or when ctx ends; its deadline is the start-up
// timeout. If any plugin fails, the others are stopped and the error names
// it.
func (s *Set) Start(ctx context.Context, env Env) error {
	if env.Logger == nil {
		env.Logger = slog.Default()
	}
	errs := make([]error, len(s.order))
	var wg sync.WaitGroup
	for i, n := range s.order {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := s.byName[n].Start(ctx, env.withLogger(n)); err != nil {
				errs[i] = fmt.Errorf("plugin %s: %w", n, err)
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), stopGrace)
		defer cancel()
		s.Stop(stopCtx)
		return err
	}
	return nil
}

func (e Env) withLogger(name string) Env {
	e.Logger = e.Logger.With("plugin", name)
	return e
}

// Set is the plugins a server started. A nil *Set has no plugins.
type Set struct {
	order  []string
	byName map[string]Plugin
}

// Get returns the started plugin of that name.
func (s *Set) Get(name string) (Plugin, bool) {
	if s == nil {
		return nil, false
	}
	p, ok := s.byName[name]
	return p, ok
}

// Names returns the started plugins' names in start order.
func (s *Set) Names() []string {
	if s == nil {
		return nil
	}
	return slices.Clone(s.order)
}

// Statuses returns every plugin's status in start order.
func (s *Set) Statuses() []Status {
	out := []Status{}
	if s == nil {
		return out
	}
	for _, n := range s.order {
		out = append(out, s.byName[n].Status())
	}
	return out
}

// Stop stops every plugin concurrently and returns their errors joined.
func (s *Set) Stop(ctx context.Context) error {
	if s == nil {
		return nil
	}
	errs := make([]error, len(s.order))
	var wg sync.WaitGroup
	for i, n := range s.order {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := s.byName[n].Stop(ctx); err != nil {
				errs[i] = fmt.Errorf("stop plugin %s: %w", n, err)
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

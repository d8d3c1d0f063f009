package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/actionserver/actionserver/internal/procgroup"
)

// Options configure a Manager. The zero value runs servers as the
// server's own user, in its working directory, with its environment.
type Options struct {
	// Credential runs the servers as the sandbox user; nil: the server's.
	Credential *syscall.Credential
	// Dir is the servers' working directory (the workspace).
	Dir string
	// Env is the sandbox's environment, to which each server's env is added.
	Env []string
	// Logger receives the servers' stderr and their life events.
	Logger *slog.Logger
	// CallTimeout bounds one forwarded request (a tool call); default 120 s.
	CallTimeout time.Duration
	// StartTimeout bounds a server's start: process, handshake and first
	// listing; Update waits for it at most this long. Default 30 s.
	StartTimeout time.Duration
	// StopGrace is how long a server's process group gets after SIGTERM
	// before SIGKILL; default procgroup.Grace, as every child gets.
	StopGrace time.Duration
	// RestartMin and RestartMax bound the backoff between restarts of a
	// server that died; defaults 1 s and 30 s.
	RestartMin, RestartMax time.Duration
}

// Manager runs the stdio MCP servers and the proxy in front of them. Create
// it with NewManager; it is safe for concurrent use.
type Manager struct {
	opts  Options
	log   *slog.Logger
	proxy *sdk.Server
	sse   *sseHandler

	updateMu sync.Mutex // one Update at a time

	mu         sync.Mutex
	servers    map[string]*stdioServer
	order      []string // names in the order of the last Update
	configured bool     // an Update has named at least one server
	closed     bool
	published  published
}

// published is what the proxy currently offers, so a change can be applied
// as a difference.
type published struct {
	tools     map[string]string // proxy tool name → fingerprint
	prompts   map[string]string
	resources map[string]string // proxy URI → fingerprint
}

// NewManager returns a Manager with no servers.
func NewManager(opts Options) *Manager {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.CallTimeout <= 0 {
		opts.CallTimeout = 120 * time.Second
	}
	if opts.StartTimeout <= 0 {
		opts.StartTimeout = 30 * time.Second
	}
	if opts.StopGrace <= 0 {
		opts.StopGrace = procgroup.Grace
	}
	if opts.RestartMin <= 0 {
		opts.RestartMin = time.Second
	}
	if opts.RestartMax < opts.RestartMin {
		opts.RestartMax = max(30*time.Second, opts.RestartMin)
	}
	m := &Manager{opts: opts, log: opts.Logger, servers: map[string]*stdioServer{}}
	m.proxy = sdk.NewServer(&sdk.Implementation{Name: "action-server-mcp-proxy", Version: "1"}, &sdk.ServerOptions{
		// Advertise tools and prompts even while no server offers any, so a
		// client that connects early still lists them (and hears of changes).
		Capabilities: &sdk.ServerCapabilities{
			Tools:     &sdk.ToolCapabilities{ListChanged: true},
			Prompts:   &sdk.PromptCapabilities{ListChanged: true},
			Resources: &sdk.ResourceCapabilities{ListChanged: true},
		},
	})
	m.sse = newSSEHandler(m.proxy)
	m.published = published{tools: map[string]string{}, prompts: map[string]string{}, resources: map[string]string{}}
	return m
}

// Update replaces the set of servers with cfgs: a server whose config is
// unchanged keeps running untouched, one no longer listed is stopped, a new
// or changed one is started. It waits (up to StartTimeout, or ctx) for the
// new servers' first start and returns a log naming each that failed and
// why, one per line; such a server keeps being retried in the background.
func (m *Manager) Update(ctx context.Context, cfgs []ServerConfig) (string, error) {
	m.updateMu.Lock()
	defer m.updateMu.Unlock()
	closed := fmt.Errorf("update MCP servers: manager is closed")

	// Stop what goes first, so a changed server never runs twice at once.
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return "", closed
	}
	var stale []*stdioServer
	for name, old := range m.servers {
		if i := slices.IndexFunc(cfgs, func(c ServerConfig) bool { return c.Name == name }); i < 0 || !old.cfg.equal(cfgs[i]) {
			stale = append(stale, old)
		}
	}
	m.mu.Unlock()
	stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), m.opts.StopGrace+2*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	for _, s := range stale {
		wg.Go(func() { s.stop(stopCtx) })
	}
	wg.Wait()

	// Start the new ones under the lock, so Close sees only started
	// servers.
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return "", closed
	}
	var fresh []*stdioServer
	next := make(map[string]*stdioServer, len(cfgs))
	order := make([]string, 0, len(cfgs))
	for _, c := range cfgs {
		if old, ok := m.servers[c.Name]; ok && old.cfg.equal(c) {
			next[c.Name] = old
		} else {
			s := startStdioServer(m, c)
			next[c.Name] = s
			fresh = append(fresh, s)
		}
		order = append(order, c.Name)
	}
	m.servers, m.order = next, order
	if len(cfgs) > 0 {
		m.configured = true
	}
	m.mu.Unlock()
	m.publish() // names change with the number of servers

	var failures []string
	for _, s := range fresh {
		select {
		case <-s.started:
		case <-ctx.Done():
			return strings.Join(failures, "\n"), fmt.Errorf("update MCP servers: %w", ctx.Err())
		}
		if st := s.status(); st.State != StateRunning {
			failures = append(failures, fmt.Sprintf("%s: %s", st.Name, st.Error))
		}
	}
	return strings.Join(failures, "\n"), nil
}

// Configured reports whether an Update has named at least one server;
// until then the host has no MCP endpoint to call.
func (m *Manager) Configured() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.configured
}

// Status returns each server's state, in the order of the last Update.
func (m *Manager) Status() []ServerStatus {
	m.mu.Lock()
	servers := m.list()
	m.mu.Unlock()
	st := make([]ServerStatus, 0, len(servers))
	for _, s := range servers {
		st = append(st, s.status())
	}
	return st
}

// list returns the servers in order; m.mu must be held.
func (m *Manager) list() []*stdioServer {
	out := make([]*stdioServer, 0, len(m.order))
	for _, name := range m.order {
		out = append(out, m.servers[name])
	}
	return out
}

// Close stops every server, returning when they are gone or ctx ends.
func (m *Manager) Close(ctx context.Context) error {
	m.mu.Lock()
	m.closed = true
	servers := m.list()
	m.servers, m.order = map[string]*stdioServer{}, nil
	m.mu.Unlock()
	m.sse.closeAll()
	var wg sync.WaitGroup
	for _, s := range servers {
		wg.Go(func() { s.stop(ctx) })
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("stop MCP servers: %w", err)
	}
	return nil
}

// publish makes the proxy offer exactly the tools and prompts of the
// current servers, under the names FastMCP's proxy gives them: a single
// configured server's names as they are, several servers' prefixed with
// "<server>_".
func (m *Manager) publish() {
	m.mu.Lock()
	defer m.mu.Unlock()
	servers := m.list()
	prefix := len(servers) > 1
	tools := map[string]string{}
	prompts := map[string]string{}
	type toolEntry struct {
		s *stdioServer
		t *sdk.Tool
	}
	type promptEntry struct {
		s *stdioServer
		p *sdk.Prompt
	}
	type resourceEntry struct {
		s   *stdioServer
		r   *sdk.Resource
		uri string
	}
	var addTools []toolEntry
	var addPrompts []promptEntry
	var addResources []resourceEntry
	resources := map[string]string{}
	for _, s := range servers {
		s.mu.Lock()
		sTools, sPrompts, sResources := s.tools, s.prompts, s.resources
		s.mu.Unlock()
		for _, r := range sResources {
			uri, ok := proxyURI(prefix, s.cfg.Name, r.URI)
			if !ok {
				continue
			}
			fp := fingerprint(s, r)
			resources[uri] = fp
			if m.published.resources[uri] != fp {
				addResources = append(addResources, resourceEntry{s, r, uri})
			}
		}
		for _, t := range sTools {
			name := proxyName(prefix, s.cfg.Name, t.Name)
			fp := fingerprint(s, t)
			tools[name] = fp
			if m.published.tools[name] != fp {
				addTools = append(addTools, toolEntry{s, t})
			}
		}
		for _, p := range sPrompts {
			name := proxyName(prefix, s.cfg.Name, p.Name)
			fp := fingerprint(s, p)
			prompts[name] = fp
			if m.published.prompts[name] != fp {
				addPrompts = append(addPrompts, promptEntry{s, p})
			}
		}
	}
	var goneTools, gonePrompts []string
	for name := range m.published.tools {
		if _, ok := tools[name]; !ok {
			goneTools = append(goneTools, name)
		}
	}
	for name := range m.published.prompts {
		if _, ok := prompts[name]; !ok {
			gonePrompts = append(gonePrompts, name)
		}
	}
	if len(goneTools) > 0 {
		m.proxy.RemoveTools(goneTools...)
	}
	if len(gonePrompts) > 0 {
		m.proxy.RemovePrompts(gonePrompts...)
	}
	var goneResources []string
	for uri := range m.published.resources {
		if _, ok := resources[uri]; !ok {
			goneResources = append(goneResources, uri)
		}
	}
	if len(goneResources) > 0 {
		m.proxy.RemoveResources(goneResources...)
	}
	for _, e := range addResources {
		if err := m.addResource(e.uri, e.s, e.r); err != nil {
			m.log.Warn("MCP resource not offered", "uri", e.uri, "error", err)
			delete(resources, e.uri)
		}
	}
	for _, e := range addTools {
		name := proxyName(prefix, e.s.cfg.Name, e.t.Name)
		if err := m.addTool(name, e.s, e.t); err != nil {
			m.log.Warn("MCP tool not offered", "tool", name, "error", err)
			delete(tools, name)
		}
	}
	for _, e := range addPrompts {
		p := *e.p
		p.Name = proxyName(prefix, e.s.cfg.Name, e.p.Name)
		m.proxy.AddPrompt(&p, m.forwardPrompt(e.s, e.p.Name))
	}
	m.published = published{tools: tools, prompts: prompts, resources: resources}
}

func proxyName(prefix bool, server, name string) string {
	if prefix {
		return server + "_" + name
	}
	return name
}

// proxyURI is a resource's URI on the proxy: with several servers the
// server's name becomes the first path element, "proto://<server>/path",
// as FastMCP prefixes them; a URI without "://" cannot be prefixed and is
// left out.
func proxyURI(prefix bool, server, uri string) (string, bool) {
	if !prefix {
		return uri, true
	}
	proto, path, ok := strings.Cut(uri, "://")
	if !ok {
		return "", false
	}
	return proto + "://" + server + "/" + path, true
}

// addResource offers one resource, read from its server on demand.
func (m *Manager) addResource(uri string, s *stdioServer, r *sdk.Resource) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%v", p)
		}
	}()
	pr := *r
	pr.URI = uri
	original := r.URI
	m.proxy.AddResource(&pr, func(ctx context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
		session, err := s.current()
		if err != nil {
			return nil, err
		}
		ctx, cancel := context.WithTimeout(ctx, m.opts.CallTimeout)
		defer cancel()
		res, err := session.ReadResource(ctx, &sdk.ReadResourceParams{URI: original})
		if err != nil {
			return nil, fmt.Errorf("read %s from MCP server %s: %w", original, s.cfg.Name, err)
		}
		for _, c := range res.Contents {
			if c != nil && c.URI == original {
				c.URI = uri
			}
		}
		return res, nil
	})
	return nil
}

// fingerprint identifies a tool or prompt of one server run, so a changed
// definition is published again.
func fingerprint(s *stdioServer, v any) string {
	b, _ := json.Marshal(v)
	return fmt.Sprintf("%p:%s", s, b)
}

// addTool offers one tool; the SDK panics on a schema it refuses, which
// must not take the proxy down.
func (m *Manager) addTool(name string, s *stdioServer, t *sdk.Tool) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	pt := *t
	pt.Name = name
	if pt.InputSchema == nil {
		pt.InputSchema = json.RawMessage(`{"type":"object"}`)
	}
	m.proxy.AddTool(&pt, m.forwardTool(s, t.Name))
	return nil
}

// forwardTool calls the tool on its server. Whatever fails on the way (the
// server is down, it hangs past CallTimeout, it died mid-call) comes back
// as a tool error the agent can read; a cancelled request cancels the call
// on the server.
func (m *Manager) forwardTool(s *stdioServer, tool string) sdk.ToolHandler {
	return func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		session, err := s.current()
		if err != nil {
			return toolError(err), nil
		}
		ctx, cancel := context.WithTimeout(ctx, m.opts.CallTimeout)
		defer cancel()
		params := &sdk.CallToolParams{Name: tool}
		if req.Params != nil {
			params.Meta = req.Params.Meta
			// A client may send null; servers validate against an object.
			if a := req.Params.Arguments; len(a) > 0 && string(a) != "null" {
				params.Arguments = req.Params.Arguments
			}
		}
		s.calls.Add(1)
		res, err := session.CallTool(ctx, params)
		s.calls.Add(-1)
		if err != nil {
			if ctx.Err() == context.DeadlineExceeded {
				err = fmt.Errorf("MCP server %s did not answer within %s", s.cfg.Name, m.opts.CallTimeout)
			}
			return toolError(fmt.Errorf("Error calling tool '%s': %w", tool, err)), nil
		}
		return res, nil
	}
}

func toolError(err error) *sdk.CallToolResult {
	return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: err.Error()}}}
}

func (m *Manager) forwardPrompt(s *stdioServer, prompt string) sdk.PromptHandler {
	return func(ctx context.Context, req *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
		session, err := s.current()
		if err != nil {
			return nil, err
		}
		ctx, cancel := context.WithTimeout(ctx, m.opts.CallTimeout)
		defer cancel()
		params := &sdk.GetPromptParams{Name: prompt}
		if req.Params != nil {
			params.Arguments = req.Params.Arguments
		}
		res, err := session.GetPrompt(ctx, params)
		if err != nil {
			return nil, fmt.Errorf("get prompt %s from MCP server %s: %w", prompt, s.cfg.Name, err)
		}
		return res, nil
	}
}

// Tools returns the names the proxy offers, sorted (for status and tests).
func (m *Manager) Tools() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	names := make([]string, 0, len(m.published.tools))
	for n := range m.published.tools {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

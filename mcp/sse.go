package mcp

import (
	"crypto/rand"
	"net/http"
	"strings"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Handler returns the proxy's HTTP handler: GET <prefix>/sse opens an MCP
// session over server-sent events and names its message endpoint,
// <prefix>/messages/?session_id=ID, in the first event, "endpoint"; POSTs
// to that endpoint carry the client's messages. The prefix is whatever
// precedes /sse in the request path (/mcp on the server), so the handler
// can be mounted anywhere without being told where.
func (m *Manager) Handler() http.Handler { return m.sse }

// sseHandler is the SSE transport of MCP 2024-11-05 on the SDK's
// SSEServerTransport, with FastMCP's paths rather than the SDK handler's
// (which posts back to the SSE path itself).
type sseHandler struct {
	server *sdk.Server

	mu       sync.Mutex
	sessions map[string]*sseSession
}

type sseSession struct {
	transport *sdk.SSEServerTransport
	ss        *sdk.ServerSession
}

func newSSEHandler(server *sdk.Server) *sseHandler {
	return &sseHandler{server: server, sessions: map[string]*sseSession{}}
}

func (h *sseHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Path
	switch {
	case strings.HasSuffix(p, "/sse"):
		if r.Method != http.MethodGet {
			w.Header().Set("Allow", http.MethodGet)
			http.Error(w, "Method Not Allowed", http.StatusMethodNotAllowed)
			return
		}
		h.serveStream(w, r, strings.TrimSuffix(p, "/sse"))
	case strings.HasSuffix(p, "/messages/") || strings.HasSuffix(p, "/messages"):
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			http.Error(w, "Method Not Allowed", http.StatusMethodNotAllowed)
			return
		}
		h.serveMessage(w, r)
	default:
		http.NotFound(w, r)
	}
}

// serveStream holds one session open for as long as the GET lasts.
func (h *sseHandler) serveStream(w http.ResponseWriter, r *http.Request, prefix string) {
	id := strings.ToLower(rand.Text())
	t := &sdk.SSEServerTransport{Endpoint: prefix + "/messages/?session_id=" + id, Response: w}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Connection", "keep-alive")
	w.Header().Set("X-Accel-Buffering", "no") // no proxy buffering of the stream
	sess := &sseSession{transport: t}
	h.mu.Lock()
	h.sessions[id] = sess
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		delete(h.sessions, id)
		h.mu.Unlock()
	}()
	ss, err := h.server.Connect(r.Context(), t, nil)
	if err != nil {
		http.Error(w, "connection failed", http.StatusInternalServerError)
		return
	}
	h.mu.Lock()
	sess.ss = ss
	h.mu.Unlock()
	defer ss.Close()
	ended := make(chan struct{})
	go func() {
		ss.Wait()
		close(ended)
	}()
	select {
	case <-r.Context().Done():
	case <-ended:
	}
}

// serveMessage hands a POSTed message to its session; the reply goes out
// on the session's stream.
func (h *sseHandler) serveMessage(w http.ResponseWriter, r *http.Request) {
	id := r.URL.Query().Get("session_id")
	if id == "" {
		http.Error(w, "session_id is required", http.StatusBadRequest)
		return
	}
	h.mu.Lock()
	sess := h.sessions[id]
	h.mu.Unlock()
	if sess == nil {
		http.Error(w, "Could not find session", http.StatusNotFound)
		return
	}
	sess.transport.ServeHTTP(w, r)
}

// closeAll ends every open session, so their streams return.
func (h *sseHandler) closeAll() {
	h.mu.Lock()
	var open []*sdk.ServerSession
	for _, s := range h.sessions {
		if s.ss != nil {
			open = append(open, s.ss)
		}
	}
	h.mu.Unlock()
	for _, ss := range open {
		ss.Close()
	}
}

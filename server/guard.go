package server

import (
	"bufio"
	"crypto/subtle"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/actionserver/actionserver/api"
)

// The guard refuses, before anything is routed, what a web page could
// send: a page of any site can make a browser post to a loopback server,
// and a page whose name the attacker re-points at 127.0.0.1 (DNS
// rebinding) can also read the answers. So:
//
//   - a request that comes from another origin (its Origin header names a
//     site other than the one the request is addressed to) is refused,
//     with a key or without;
//   - without a key, a request must be addressed to this machine by a name
//     no outside DNS controls (an IP address, localhost, ...);
//   - a request body must be declared JSON (multipart for /upload_file;
//     anything for a PUT of a file's bytes), which a page can send
//     cross-site only after a CORS preflight, which this server never
//     grants.

// uploadPath takes a multipart body, rawBodyPath (with PUT) a file's
// bytes; every other body is JSON.
const (
	uploadPath  = "/upload_file"
	rawBodyPath = "/files/content"
)

// guard applies the Host, Origin, API key and Content-Type rules in this
// order. gin sets the Allow header of a 405 before any middleware runs;
// it is held back until the request has passed all of them, so a refused
// request learns nothing about which routes exist.
func (s *Server) guard(c *gin.Context) {
	h := c.Writer.Header()
	allow, hasAllow := h["Allow"]
	h.Del("Allow")

	if msg := s.refuseHost(c.Request); msg != "" {
		detail(c, http.StatusForbidden, api.CodeForbidden, msg)
		return
	}
	if msg := s.refuseOrigin(c.Request); msg != "" {
		detail(c, http.StatusForbidden, api.CodeForbidden, msg)
		return
	}
	if !s.claimed(c.Request.URL.Path) {
		detail(c, http.StatusServiceUnavailable, api.CodeUnavailable, notClaimed)
		return
	}
	if !s.keyAccepted(c) {
		detail(c, http.StatusForbidden, api.CodeUnauthorized, "Invalid API Key")
		return
	}
	// A path no route serves answers 404 or 405 whatever its body.
	if c.FullPath() != "" {
		if msg := refuseContentType(c.Request); msg != "" {
			detail(c, http.StatusUnsupportedMediaType, api.CodeUnsupportedMedia, msg)
			return
		}
	}
	if hasAllow {
		h["Allow"] = allow
	}
	c.Next()
}

// keyAccepted reports whether the request may go on as far as the key is
// concerned: no key is set, the path is open, or the header carries it.
// The MCP routes take the key in more headers.
// The key is read on every request: a claim may replace it (claim.go).
func (s *Server) keyAccepted(c *gin.Context) bool {
	path := c.Request.URL.Path
	key, _ := s.keys.load()
	if key == "" || openPaths[path] || s.openByOption(path) {
		return true
	}
	if mcpPaths[path] {
		return s.mcpKeyValid(c)
	}
	got := c.GetHeader(api.HeaderAPIKey)
	return subtle.ConstantTimeCompare([]byte(got), []byte(key)) == 1
}

// refuseHost returns why the request's Host is refused, or "". With a key
// any name is accepted: clusters address servers by service names, and a
// rebinding page cannot send the key. Without one, only names that no
// outside DNS answers for.
func (s *Server) refuseHost(r *http.Request) string {
	// An init token counts as a key: a rebinding page cannot send it.
	if key, _ := s.keys.load(); key != "" || s.opts.InitToken != "" || r.Host == "" {
		return ""
	}
	name := strings.ToLower(hostName(r.Host))
	if net.ParseIP(name) != nil || localNames[name] || strings.HasSuffix(name, clusterSuffix) {
		return ""
	}
	for _, h := range s.opts.AllowedHosts {
		if strings.EqualFold(h, name) {
			return ""
		}
	}
	return fmt.Sprintf("Host %q is refused: without an API key the server answers only requests addressed to an IP address or localhost "+
		"(set SESSION_API_KEY, or start the server with --allow-host %s)", r.Host, name)
}

// localNames are accepted as Host without a key: localhost, and the name
// Docker gives the host machine, by which OpenHands' DockerRuntime reaches
// its sandboxes from inside a container. Neither can be re-pointed by an
// outside DNS server.
var localNames = map[string]bool{"localhost": true, "host.docker.internal": true}

// clusterSuffix ends the service names by which OpenHands'
// KubernetesRuntime reaches its sandboxes, without a key; cluster DNS
// answers for them, not the Internet's.
const clusterSuffix = ".svc.cluster.local"

// hostName returns the name or address of a Host header value, without
// port and brackets; an IPv6 address may come with or without brackets.
func hostName(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return strings.TrimSuffix(strings.TrimPrefix(hostport, "["), "]")
}

// refuseOrigin returns why the request's Origin is refused, or "". A
// request without one (every client but a browser) is not concerned.
func (s *Server) refuseOrigin(r *http.Request) string {
	origin, ok := r.Header["Origin"]
	if !ok {
		return ""
	}
	o := ""
	if len(origin) > 0 {
		o = origin[0]
	}
	if len(origin) == 1 && (sameOrigin(o, r.Host) || s.allowedOrigin(o)) {
		return ""
	}
	return fmt.Sprintf("Cross-origin request refused: Origin %q is not this server's (start the server with --allow-origin ORIGIN to accept one)", o)
}

// sameOrigin reports whether origin (scheme://host[:port]) names the host
// and port the request was addressed to. A Host without a port matches any
// port of the same name: behind a proxy the port the browser used is not
// known here. "null", sent by sandboxed pages and files, is foreign.
func sameOrigin(origin, host string) bool {
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Path != "" {
		return false
	}
	oName, oPort := splitDefault(u.Host, map[string]string{"http": "80", "https": "443"}[u.Scheme])
	hName, hPort := splitDefault(host, "")
	if !strings.EqualFold(oName, hName) {
		return false
	}
	return hPort == "" || oPort == hPort
}

// splitDefault splits host[:port], giving def when there is no port.
func splitDefault(hostport, def string) (name, port string) {
	if h, p, err := net.SplitHostPort(hostport); err == nil {
		return h, p
	}
	return hostName(hostport), def
}

// allowedOrigin reports whether the operator accepted origin.
func (s *Server) allowedOrigin(origin string) bool {
	n := NormalizeOrigin(origin)
	for _, a := range s.opts.AllowedOrigins {
		if NormalizeOrigin(a) == n {
			return true
		}
	}
	return false
}

// NormalizeOrigin lower-cases an origin's scheme and host and drops a
// default port, so "HTTP://Example.com:80" and "http://example.com" are
// one origin; what does not parse is returned as is.
func NormalizeOrigin(origin string) string {
	u, err := url.Parse(strings.TrimSuffix(origin, "/"))
	if err != nil || u.Host == "" {
		return origin
	}
	scheme := strings.ToLower(u.Scheme)
	name, port := splitDefault(strings.ToLower(u.Host), "")
	if (scheme == "http" && port == "80") || (scheme == "https" && port == "443") {
		port = ""
	}
	if strings.Contains(name, ":") {
		name = "[" + name + "]"
	}
	if port != "" {
		name += ":" + port
	}
	return scheme + "://" + name
}

// refuseContentType returns why a request's body is refused, or "": a
// body must be declared application/json, but /upload_file's, which is
// multipart (checked there). A request without a body is accepted
// whatever it declares: clients send empty POSTs without a type.
func refuseContentType(r *http.Request) string {
	if r.URL.Path == uploadPath || !hasBody(r) {
		return ""
	}
	// A file's bytes are the body of PUT /files/content, whatever their
	// type. No page can send a PUT cross-site without a preflight either.
	if r.Method == http.MethodPut && r.URL.Path == rawBodyPath {
		return ""
	}
	ct := r.Header.Get("Content-Type")
	if ct == "" {
		return "Content-Type must be application/json: the request has a body but no Content-Type"
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err == nil && mt == "application/json" {
		return ""
	}
	return fmt.Sprintf("Content-Type must be application/json, not %q", ct)
}

// hasBody reports whether the request carries at least one byte of body.
// A body of unknown length (chunked) is peeked at, and put back.
func hasBody(r *http.Request) bool {
	switch {
	case r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0:
		return false
	case r.ContentLength > 0:
		return true
	}
	br := bufio.NewReaderSize(r.Body, 16)
	_, err := br.Peek(1)
	r.Body = struct {
		io.Reader
		io.Closer
	}{br, r.Body}
	return err == nil
}

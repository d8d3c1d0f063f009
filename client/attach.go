package client

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/coder/websocket"

	"github.com/actionserver/actionserver/api"
)

// Attach opens a websocket to a session's terminal. Binary messages from
// the server are raw terminal output; send keystrokes as binary messages
// and {"type":"resize","rows":R,"cols":C} as a text message.
func (c *Client) Attach(ctx context.Context, session string) (*websocket.Conn, error) {
	u := c.base + sessionPath(session, "attach")
	u = "ws" + strings.TrimPrefix(u, "http")
	h := http.Header{}
	if c.apiKey != "" {
		h.Set(api.HeaderAPIKey, c.apiKey)
	}
	conn, resp, err := websocket.Dial(ctx, u, &websocket.DialOptions{HTTPClient: c.hc, HTTPHeader: h})
	if err != nil {
		if resp != nil && resp.StatusCode != http.StatusSwitchingProtocols {
			return nil, &Error{StatusCode: resp.StatusCode, Detail: err.Error()}
		}
		return nil, fmt.Errorf("attach to session %s: %w", session, err)
	}
	conn.SetReadLimit(16 << 20)
	return conn, nil
}

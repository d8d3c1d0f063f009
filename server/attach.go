package server

import (
	"context"
	"encoding/json"

	"github.com/coder/websocket"
	"github.com/gin-gonic/gin"

	"github.com/actionserver/actionserver/api"
)

// attach connects a person's terminal to a session over a websocket: binary
// messages from the server are the terminal's raw output; binary messages
// from the client are keystrokes; a text message
// {"type": "resize", "rows": R, "cols": C} resizes the terminal. A client
// that falls too far behind is disconnected rather than holding up the
// shell.
func (s *Server) attach(c *gin.Context) {
	sess, ok := s.session(c)
	if !ok {
		return
	}
	term, err := sess.Attach()
	if err != nil {
		fail(c, err)
		return
	}
	defer term.Close()
	// The guard has applied the Origin rule, --allow-origin included, to
	// this request as to every other; the library's own check knows
	// nothing of the origins the operator allowed.
	conn, err := websocket.Accept(c.Writer, c.Request, &websocket.AcceptOptions{InsecureSkipVerify: true})
	if err != nil {
		return // Accept has answered the client
	}
	defer conn.CloseNow()
	conn.SetReadLimit(1 << 20)

	ctx, cancel := context.WithCancel(c.Request.Context())
	defer cancel()
	go func() {
		defer cancel()
		for b := range term.Output() {
			if err := conn.Write(ctx, websocket.MessageBinary, b); err != nil {
				return
			}
		}
		reason := "the shell ended"
		if term.Dropped() {
			reason = "the terminal fell behind the output"
		}
		conn.Close(websocket.StatusGoingAway, reason)
	}()
	for {
		typ, data, err := conn.Read(ctx)
		if err != nil {
			return
		}
		if typ == websocket.MessageBinary {
			if err := term.Write(data); err != nil {
				conn.Close(websocket.StatusInternalError, err.Error())
				return
			}
			continue
		}
		var msg api.AttachResize
		if json.Unmarshal(data, &msg) == nil && msg.Type == "resize" && msg.Rows > 0 && msg.Cols > 0 {
			_ = term.Resize(msg.Rows, msg.Cols)
		}
	}
}

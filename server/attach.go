package server

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/coder/websocket"
	"github.com/gin-gonic/gin"
)

// attach connects a person's terminal to a session over a websocket: binary
// messages from the server are the terminal's raw output; binary messages
// from the client are keystrokes; a text message
// {"type": "resize", "rows": R, "cols": C} resizes the terminal. A client
// that falls too far behind is disconnected rather than holding up the
// shell.
func (s *Server) attach(c *gin.Context) {
	ns, ok := s.session(c)
	if !ok {
		return
	}
	sub, unsubscribe, err := ns.Session.AttachRaw()
	if err != nil {
		detail(c, http.StatusConflict, err.Error())
		return
	}
	defer unsubscribe()
	conn, err := websocket.Accept(c.Writer, c.Request, nil)
	if err != nil {
		return // Accept has answered the client
	}
	defer conn.CloseNow()
	conn.SetReadLimit(1 << 20)

	ctx, cancel := context.WithCancel(c.Request.Context())
	defer cancel()
	go func() {
		defer cancel()
		for b := range sub.C {
			if err := conn.Write(ctx, websocket.MessageBinary, b); err != nil {
				return
			}
		}
		reason := "the shell ended"
		if sub.Dropped {
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
			if err := ns.Session.WriteRaw(data); err != nil {
				conn.Close(websocket.StatusInternalError, err.Error())
				return
			}
			continue
		}
		var msg struct {
			Type       string `json:"type"`
			Rows, Cols uint16
		}
		if json.Unmarshal(data, &msg) == nil && msg.Type == "resize" && msg.Rows > 0 && msg.Cols > 0 {
			_ = ns.Session.Resize(msg.Rows, msg.Cols)
		}
	}
}

package jupyter

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"
)

// maxMessage bounds one websocket message (a cell's image is the big
// case); maxCellText bounds the text a cell collects.
const (
	maxMessage  = 64 << 20
	maxCellText = 16 << 20
)

// interruptSettle bounds the wait for an interrupted cell to finish.
const interruptSettle = 5 * time.Second

// errKernelDied means the kernel process died (Jupyter Server restarts it
// by itself, empty) or its connection broke while a cell ran.
var errKernelDied = errors.New("the IPython kernel died")

// kernel is one Jupyter kernel reached over the server's REST API and its
// websocket channels endpoint (the JSON protocol).
type kernel struct {
	base, token string
	hc          *http.Client
	id          string
	session     string
	ws          *websocket.Conn
	cancel      context.CancelFunc
	done        chan struct{} // closed when the reader stops

	mu      sync.Mutex
	waiters map[string]*waiter
	died    bool // the kernel restarted or died since it was created
}

// message is the part of a Jupyter message the client reads.
type message struct {
	Header struct {
		MsgType string `json:"msg_type"`
	} `json:"header"`
	ParentHeader struct {
		MsgID string `json:"msg_id"`
	} `json:"parent_header"`
	Channel string          `json:"channel"`
	Content json.RawMessage `json:"content"`
}

// waiter collects the messages answering one request.
type waiter struct {
	mu     sync.Mutex
	msgs   []message
	notify chan struct{}
}

func (w *waiter) push(m message) {
	w.mu.Lock()
	w.msgs = append(w.msgs, m)
	w.mu.Unlock()
	select {
	case w.notify <- struct{}{}:
	default:
	}
}

func (w *waiter) take() []message {
	w.mu.Lock()
	defer w.mu.Unlock()
	m := w.msgs
	w.msgs = nil
	return m
}

func newID() string {
	b := make([]byte, 16)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// api calls the Jupyter Server REST API.
func (k *kernel) api(ctx context.Context, method, path string, body any, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, k.base+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "token "+k.token)
	resp, err := k.hc.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode/100 != 2 {
		return &apiError{status: resp.StatusCode, msg: fmt.Sprintf("%s %s: %d %s", method, path, resp.StatusCode, strings.TrimSpace(string(data)))}
	}
	if out != nil {
		return json.Unmarshal(data, out)
	}
	return nil
}

type apiError struct {
	status int
	msg    string
}

func (e *apiError) Error() string { return e.msg }

// startKernel creates a kernel of the server's default kind and connects
// to its channels.
func startKernel(ctx context.Context, base, token string, hc *http.Client) (*kernel, error) {
	k := &kernel{base: base, token: token, hc: hc, session: newID(), waiters: map[string]*waiter{}}
	var created struct {
		ID string `json:"id"`
	}
	if err := k.api(ctx, http.MethodPost, "/api/kernels", map[string]any{}, &created); err != nil {
		return nil, fmt.Errorf("create kernel: %w", err)
	}
	k.id = created.ID
	if err := k.connect(ctx); err != nil {
		k.shutdown(ctx)
		return nil, err
	}
	return k, nil
}

// connect opens the channels websocket and starts the reader.
func (k *kernel) connect(ctx context.Context) error {
	url := "ws" + strings.TrimPrefix(k.base, "http") + "/api/kernels/" + k.id + "/channels?session_id=" + k.session
	ws, _, err := websocket.Dial(ctx, url, &websocket.DialOptions{
		HTTPClient: k.hc,
		HTTPHeader: http.Header{"Authorization": {"token " + k.token}},
	})
	if err != nil {
		return fmt.Errorf("connect to kernel %s: %w", k.id, err)
	}
	ws.SetReadLimit(maxMessage)
	rctx, cancel := context.WithCancel(context.Background())
	k.ws, k.cancel, k.done = ws, cancel, make(chan struct{})
	go k.read(rctx)
	return nil
}

// read dispatches incoming messages to the waiting requests and notes a
// kernel that died or restarted.
func (k *kernel) read(ctx context.Context) {
	defer close(k.done)
	defer k.wakeAll()
	for {
		_, data, err := k.ws.Read(ctx)
		if err != nil {
			k.mu.Lock()
			k.died = true
			k.mu.Unlock()
			return
		}
		var m message
		if json.Unmarshal(data, &m) != nil {
			continue
		}
		if m.Header.MsgType == "status" {
			var st struct {
				State string `json:"execution_state"`
			}
			if json.Unmarshal(m.Content, &st) == nil && (st.State == "restarting" || st.State == "dead") {
				k.mu.Lock()
				k.died = true
				k.mu.Unlock()
				k.wakeAll()
				continue
			}
		}
		k.mu.Lock()
		w := k.waiters[m.ParentHeader.MsgID]
		k.mu.Unlock()
		if w != nil {
			w.push(m)
		}
	}
}

func (k *kernel) wakeAll() {
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, w := range k.waiters {
		select {
		case w.notify <- struct{}{}:
		default:
		}
	}
}

// alive reports whether the kernel has neither died nor lost its
// connection since it was created.
func (k *kernel) alive() bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return !k.died
}

// execute runs code and collects its outputs until both the execute_reply
// and the kernel's return to idle have arrived, so nothing of this cell
// can leak into the next. When ctx ends first, the kernel is interrupted
// and timedOut is true.
func (k *kernel) execute(ctx context.Context, code string) (outs []output, timedOut bool, err error) {
	msgID := newID()
	w := &waiter{notify: make(chan struct{}, 1)}
	k.mu.Lock()
	if k.died {
		k.mu.Unlock()
		return nil, false, errKernelDied
	}
	k.waiters[msgID] = w
	k.mu.Unlock()
	defer func() {
		k.mu.Lock()
		delete(k.waiters, msgID)
		k.mu.Unlock()
	}()

	// stop_on_error false: cells are sent one at a time, so there is no
	// queue to abort, and with it a cell sent just after a failing one
	// could be answered "aborted" without running.
	req := map[string]any{
		"header": map[string]any{"msg_id": msgID, "msg_type": "execute_request", "username": "",
			"session": k.session, "version": "5.3", "date": time.Now().UTC().Format(time.RFC3339Nano)},
		"parent_header": map[string]any{},
		"metadata":      map[string]any{},
		"channel":       "shell",
		"content": map[string]any{"code": code, "silent": false, "store_history": false,
			"user_expressions": map[string]any{}, "allow_stdin": false, "stop_on_error": false},
		"buffers": []any{},
	}
	b, _ := json.Marshal(req)
	if err := k.ws.Write(ctx, websocket.MessageText, b); err != nil {
		if ctx.Err() != nil {
			return nil, true, nil
		}
		return nil, false, fmt.Errorf("send cell: %w", err)
	}

	var replied, idle bool
	textBytes := 0
	wait := ctx.Done()
	var settled <-chan time.Time // after an interrupt: how long to wait for the kernel
	for !(replied && idle) {
		select {
		case <-w.notify:
		case <-wait:
			ictx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			ierr := k.api(ictx, http.MethodPost, "/api/kernels/"+k.id+"/interrupt", nil, nil)
			cancel()
			if ierr != nil {
				return outs, true, fmt.Errorf("interrupt kernel after timeout: %w", ierr)
			}
			// Let the interrupted cell finish: a cell sent while the
			// kernel is still unwinding would be aborted unrun.
			timedOut, wait, settled = true, nil, time.After(interruptSettle)
		case <-settled:
			return outs, true, nil
		}
		for _, m := range w.take() {
			switch m.Header.MsgType {
			case "stream":
				var c struct {
					Text string `json:"text"`
				}
				json.Unmarshal(m.Content, &c)
				outs, textBytes = appendText(outs, c.Text, textBytes)
			case "execute_result", "display_data":
				var c struct {
					Data map[string]any `json:"data"`
				}
				json.Unmarshal(m.Content, &c)
				if s, ok := c.Data["text/plain"].(string); ok {
					outs, textBytes = appendText(outs, s, textBytes)
				}
				if png, ok := c.Data["image/png"].(string); ok {
					outs = append(outs, output{image: "data:image/png;base64," + strings.TrimSpace(png)})
				}
			case "error":
				var c struct {
					Traceback []string `json:"traceback"`
				}
				json.Unmarshal(m.Content, &c)
				outs, textBytes = appendText(outs, strings.Join(c.Traceback, "\n"), textBytes)
			case "execute_reply":
				replied = true
			case "status":
				var st struct {
					State string `json:"execution_state"`
				}
				if json.Unmarshal(m.Content, &st) == nil && st.State == "idle" {
					idle = true
				}
			}
		}
		if !(replied && idle) && !k.alive() {
			return outs, timedOut, errKernelDied
		}
	}
	return outs, timedOut, nil
}

// appendText adds text unless the cell has already produced maxCellText,
// in which case one notice replaces the rest.
func appendText(outs []output, s string, total int) ([]output, int) {
	switch {
	case total > maxCellText:
		return outs, total
	case total+len(s) > maxCellText:
		s = s[:maxCellText-total] + "\n[Output truncated: the cell printed more than 16 MB.]\n"
		return append(outs, output{text: s}), maxCellText + 1
	}
	return append(outs, output{text: s}), total + len(s)
}

// close drops the connection without ending the kernel.
func (k *kernel) close() {
	if k.ws != nil {
		k.ws.Close(websocket.StatusNormalClosure, "")
		k.cancel()
		<-k.done
	}
}

// shutdown closes the connection and ends the kernel.
func (k *kernel) shutdown(ctx context.Context) {
	k.close()
	if k.id != "" {
		k.api(ctx, http.MethodDelete, "/api/kernels/"+k.id, nil, nil)
	}
}

package jupyter

import (
	"context"
	"net"
	"net/http"
	"syscall"
	"time"
)

// Jupyter Server writes each kernel message to the websocket as its own
// small packet and does not disable Nagle's algorithm, so every second
// message of a cell waited for this side's delayed ACK: 40 ms per cell.
// Acknowledging at once removes the wait. Linux drops quick-ACK mode on
// its own, so it is set again before every read.

// quickAckConn sets TCP_QUICKACK before each read.
type quickAckConn struct {
	*net.TCPConn
	raw syscall.RawConn
}

func (c *quickAckConn) Read(p []byte) (int, error) {
	c.raw.Control(func(fd uintptr) {
		syscall.SetsockoptInt(int(fd), syscall.IPPROTO_TCP, syscall.TCP_QUICKACK, 1)
	})
	return c.TCPConn.Read(p)
}

// newHTTPClient returns a client for the loopback Jupyter Server whose
// connections acknowledge at once.
func newHTTPClient() *http.Client {
	d := &net.Dialer{Timeout: 10 * time.Second}
	tr := &http.Transport{
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := d.DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			tc, ok := c.(*net.TCPConn)
			if !ok {
				return c, nil
			}
			raw, err := tc.SyscallConn()
			if err != nil {
				return c, nil
			}
			return &quickAckConn{TCPConn: tc, raw: raw}, nil
		},
		MaxIdleConnsPerHost: 4,
	}
	return &http.Client{Transport: tr}
}

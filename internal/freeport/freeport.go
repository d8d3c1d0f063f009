// Package freeport picks and checks ports for servers another process
// starts, which therefore cannot be handed a listener.
//
// Asking the kernel for port 0 and closing the listener, the usual trick,
// hands out a port from the ephemeral range; once released, that port can
// be taken again at once by any outgoing connection or by anyone else's
// bind to port 0, before the child gets to listen on it. Pick therefore
// prefers ports outside that range, which only another explicit choice
// can take.
package freeport

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
)

// rangeFile holds the kernel's ephemeral port range, "low\thigh".
const rangeFile = "/proc/sys/net/ipv4/ip_local_port_range"

// lowest is the lowest port Pick chooses: below it are the ports people
// give their own servers (3000, 8000, 8080, 8888, ...).
const lowest = 10000

// tries is how many random ports Pick tries before it falls back to the
// kernel's choice.
const tries = 64

// Pick returns a port on host (an IP address) that could be listened on
// just now, chosen at random outside the kernel's ephemeral port range
// when there is room for it there.
func Pick(host string) (int, error) {
	lo, hi := ephemeralRange()
	return pick(host, outside(lo, hi))
}

// span is an inclusive range of ports.
type span struct{ first, last int }

func (s span) size() int { return s.last - s.first + 1 }

// outside lists the ports from lowest to 65535 that are not in lo..hi.
func outside(lo, hi int) []span {
	var spans []span
	if hi < 65535 {
		spans = append(spans, span{max(hi+1, lowest), 65535})
	}
	if lo > lowest {
		spans = append(spans, span{lowest, min(lo-1, 65535)})
	}
	var kept []span
	for _, s := range spans {
		if s.size() > 0 {
			kept = append(kept, s)
		}
	}
	return kept
}

func pick(host string, spans []span) (int, error) {
	total := 0
	for _, s := range spans {
		total += s.size()
	}
	for i := 0; total > 0 && i < tries; i++ {
		n := rand.IntN(total)
		port := 0
		for _, s := range spans {
			if n < s.size() {
				port = s.first + n
				break
			}
			n -= s.size()
		}
		if Check(host, port) == nil {
			return port, nil
		}
	}
	l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return 0, fmt.Errorf("find a free port on %s: %w", host, err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Check returns nil when port on host can be listened on just now, and
// why not otherwise.
func Check(host string, port int) error {
	l, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(port)))
	if err != nil {
		return fmt.Errorf("port %d is not available: %w", port, err)
	}
	return l.Close()
}

// ephemeralRange reads the kernel's ephemeral port range, or returns
// Linux's default when it cannot.
func ephemeralRange() (lo, hi int) {
	lo, hi = 32768, 60999
	b, err := os.ReadFile(rangeFile)
	if err != nil {
		return lo, hi
	}
	f := strings.Fields(string(b))
	if len(f) != 2 {
		return lo, hi
	}
	l, err1 := strconv.Atoi(f[0])
	h, err2 := strconv.Atoi(f[1])
	if err1 != nil || err2 != nil || l > h {
		return lo, hi
	}
	return l, h
}

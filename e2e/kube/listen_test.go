package kube

import (
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every socket the cluster's own processes listen on, TCP or UDP, IPv4
// or IPv6, is on a loopback address or the pods' bridge: nothing of it is
// reachable from the machine's network.
func TestCluster_ListensOnlyOnLoopbackOrItsBridge(t *testing.T) {
	c := env.cluster
	owners := map[string]string{} // socket inode -> the process holding it
	for _, p := range c.procs {
		proc := filepath.Join("/proc", strconv.Itoa(p.Process.Pid))
		fds, err := os.ReadDir(filepath.Join(proc, "fd"))
		require.NoError(t, err)
		comm, err := os.ReadFile(filepath.Join(proc, "comm")) // nsenter has exec'd by now
		require.NoError(t, err)
		name := strings.TrimSpace(string(comm))
		for _, fd := range fds {
			link, err := os.Readlink(filepath.Join(proc, "fd", fd.Name()))
			if err == nil && strings.HasPrefix(link, "socket:[") {
				owners[strings.TrimSuffix(strings.TrimPrefix(link, "socket:["), "]")] = name
			}
		}
	}
	_, pods, err := net.ParseCIDR(podSubnet)
	require.NoError(t, err)
	seen := map[string]bool{}
	for _, table := range []string{"tcp", "tcp6", "udp", "udp6"} {
		b, err := os.ReadFile("/proc/self/net/" + table)
		require.NoError(t, err)
		for _, line := range strings.Split(string(b), "\n")[1:] {
			f := strings.Fields(line)
			if len(f) < 10 {
				continue
			}
			owner, ours := owners[f[9]]
			// TCP in LISTEN (0A); UDP unconnected (07), as a server binds.
			if !ours || (strings.HasPrefix(table, "tcp") && f[3] != "0A") || (strings.HasPrefix(table, "udp") && f[3] != "07") {
				continue
			}
			ip, port, err := procNetAddr(f[1])
			require.NoError(t, err, line)
			seen[owner] = true
			assert.True(t, ip.IsLoopback() || pods.Contains(ip), "%s listens on %s:%d (%s)", owner, ip, port, table)
		}
	}
	for _, want := range []string{"etcd", "kube-apiserver", "kubelet", "coredns"} {
		assert.True(t, seen[want], "no listening socket of %s was found (saw %v)", want, seen)
	}
}

// procNetAddr decodes a local address of /proc/net/{tcp,udp}[6]: the IP
// in hexadecimal, in 32-bit words of the host's (little-endian) order,
// then the port.
func procNetAddr(s string) (net.IP, int, error) {
	h, p, ok := strings.Cut(s, ":")
	if !ok {
		return nil, 0, fmt.Errorf("no port in %q", s)
	}
	raw, err := hex.DecodeString(h)
	if err != nil || (len(raw) != 4 && len(raw) != 16) {
		return nil, 0, fmt.Errorf("address %q", s)
	}
	ip := make(net.IP, len(raw))
	for w := 0; w < len(raw); w += 4 {
		for i := 0; i < 4; i++ {
			ip[w+i] = raw[w+3-i]
		}
	}
	port, err := strconv.ParseUint(p, 16, 16)
	return ip, int(port), err
}

// Package hostnet saves and puts back what running containers change on the
// machine: netavark turns on IP forwarding, adds NETAVARK* chains to
// iptables (with jumps to them from the built-in chains) and creates the
// podman0 bridge; a kubelet adds KUBE-* chains, and the CNI bridge plugin
// turns on forwarding and creates its bridge. Tests and benchmarks that
// start containers save the state first and restore it after, leaving
// alone whatever was there before.
package hostnet

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"slices"
	"strings"
)

// State is the part of the machine's network set-up containers change.
type State struct {
	ipForward string
	prefixes  []string            // of the chains to watch
	chains    map[string][]string // "iptables/nat" -> such chains there before
	bridges   map[string]bool     // bridge name -> there before
}

const ipForwardPath = "/proc/sys/net/ipv4/ip_forward"

var firewallTables = []string{"filter", "nat", "mangle", "raw"}

// Save records the state podman's containers change: the NETAVARK chains
// and the podman0 bridge.
func Save() (*State, error) {
	return SaveOf([]string{"NETAVARK"}, "podman0")
}

// SaveOf records the state now, watching the chains whose names start
// with one of prefixes and the named bridges.
func SaveOf(prefixes []string, bridges ...string) (*State, error) {
	fw, err := os.ReadFile(ipForwardPath)
	if err != nil {
		return nil, fmt.Errorf("read ip_forward: %w", err)
	}
	h := &State{
		ipForward: strings.TrimSpace(string(fw)),
		prefixes:  slices.Clone(prefixes),
		chains:    map[string][]string{},
		bridges:   map[string]bool{},
	}
	for _, tool := range []string{"iptables", "ip6tables"} {
		for _, table := range firewallTables {
			chains, _, err := h.rules(tool, table)
			if err != nil {
				continue // no such tool or table here
			}
			h.chains[tool+"/"+table] = chains
		}
	}
	for _, b := range bridges {
		_, err = net.InterfaceByName(b)
		h.bridges[b] = err == nil
	}
	return h, nil
}

// watched reports whether chain is one of the watched chains.
func (h *State) watched(chain string) bool {
	return slices.ContainsFunc(h.prefixes, func(p string) bool { return strings.HasPrefix(chain, p) })
}

// rules lists a table's watched chains and the rules that jump to them
// from other chains (as -A lines of iptables -S).
func (h *State) rules(tool, table string) (chains, jumps []string, err error) {
	out, err := exec.Command(tool, "-w", "-t", table, "-S").Output()
	if err != nil {
		return nil, nil, err
	}
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) >= 2 && f[0] == "-N" && h.watched(f[1]):
			chains = append(chains, f[1])
		case len(f) >= 2 && f[0] == "-A" && !h.watched(f[1]) && slices.ContainsFunc(f[2:], h.watched):
			jumps = append(jumps, line)
		}
	}
	return chains, jumps, nil
}

// Restore puts back what containers changed since Save: it removes the
// watched chains and bridges that were not there, and sets ip_forward to
// its old value.
func (h *State) Restore() error {
	var errs []error
	for _, tool := range []string{"iptables", "ip6tables"} {
		for _, table := range firewallTables {
			before, ok := h.chains[tool+"/"+table]
			if !ok {
				continue
			}
			chains, jumps, err := h.rules(tool, table)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			var added []string
			for _, c := range chains {
				if !slices.Contains(before, c) {
					added = append(added, c)
				}
			}
			if len(added) == 0 {
				continue
			}
			for _, j := range jumps {
				f := strings.Fields(j)
				if !slices.ContainsFunc(added, func(c string) bool { return slices.Contains(f, c) }) {
					continue
				}
				// The rule as -S prints it, quoted comments included, is
				// shell syntax: the shell splits it back into arguments.
				del := tool + " -w -t " + table + " -D" + strings.TrimPrefix(j, "-A")
				if out, err := exec.Command("sh", "-c", del).CombinedOutput(); err != nil {
					errs = append(errs, fmt.Errorf("%s: %w: %s", del, err, out))
				}
			}
			for _, op := range []string{"-F", "-X"} {
				for _, c := range added {
					if out, err := exec.Command(tool, "-w", "-t", table, op, c).CombinedOutput(); err != nil {
						errs = append(errs, fmt.Errorf("%s -t %s %s %s: %w: %s", tool, table, op, c, err, out))
					}
				}
			}
		}
	}
	for b, before := range h.bridges {
		if _, err := net.InterfaceByName(b); err == nil && !before {
			if out, err := exec.Command("ip", "link", "del", b).CombinedOutput(); err != nil {
				errs = append(errs, fmt.Errorf("remove the %s bridge: %w: %s", b, err, out))
			}
		}
	}
	if fw, err := os.ReadFile(ipForwardPath); err == nil && strings.TrimSpace(string(fw)) != h.ipForward {
		if err := os.WriteFile(ipForwardPath, []byte(h.ipForward+"\n"), 0o644); err != nil {
			errs = append(errs, fmt.Errorf("restore ip_forward to %s: %w", h.ipForward, err))
		}
	}
	return errors.Join(errs...)
}

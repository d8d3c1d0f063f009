package hostnet

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRestore_RemovesWhatContainersAddedAndKeepsTheRest(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("changing iptables and sysctls needs root")
	}
	if _, err := exec.LookPath("iptables"); err != nil {
		t.Skip("no iptables here")
	}
	ipt := func(args ...string) {
		t.Helper()
		out, err := exec.Command("iptables", append([]string{"-w", "-t", "filter"}, args...)...).CombinedOutput()
		require.NoError(t, err, "%s", out)
	}
	// One chain there before (kept), one added after (removed), with a
	// jump whose comment has spaces, as netavark writes them.
	ipt("-N", "NETAVARK_ASTEST_OLD")
	t.Cleanup(func() { _ = exec.Command("iptables", "-w", "-X", "NETAVARK_ASTEST_OLD").Run() })
	before, err := os.ReadFile(ipForwardPath)
	require.NoError(t, err)

	s, err := Save()
	require.NoError(t, err)
	ipt("-N", "NETAVARK_ASTEST_NEW")
	ipt("-A", "NETAVARK_ASTEST_NEW", "-j", "RETURN")
	ipt("-I", "FORWARD", "-m", "comment", "--comment", "as test jump", "-j", "NETAVARK_ASTEST_NEW")
	flipped := "1"
	if strings.TrimSpace(string(before)) == "1" {
		flipped = "0"
	}
	require.NoError(t, os.WriteFile(ipForwardPath, []byte(flipped), 0o644))

	require.NoError(t, s.Restore())
	out, err := exec.Command("iptables-save", "-t", "filter").Output()
	require.NoError(t, err)
	assert.NotContains(t, string(out), "NETAVARK_ASTEST_NEW")
	assert.NotContains(t, string(out), "as test jump")
	assert.Contains(t, string(out), ":NETAVARK_ASTEST_OLD", "a chain that was there before stays")
	after, err := os.ReadFile(ipForwardPath)
	require.NoError(t, err)
	assert.Equal(t, strings.TrimSpace(string(before)), strings.TrimSpace(string(after)))
}

func TestSaveOf_WatchesTheGivenChainsAndBridges(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("changing iptables and links needs root")
	}
	if _, err := exec.LookPath("iptables"); err != nil {
		t.Skip("no iptables here")
	}
	run := func(name string, args ...string) {
		t.Helper()
		out, err := exec.Command(name, args...).CombinedOutput()
		require.NoError(t, err, "%s", out)
	}
	s, err := SaveOf([]string{"ASTEST-KUBE-"}, "astestbr0")
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = exec.Command("ip", "link", "del", "astestbr0").Run()
		_ = exec.Command("iptables", "-w", "-t", "nat", "-F", "ASTEST-KUBE-X").Run()
		_ = exec.Command("iptables", "-w", "-t", "nat", "-X", "ASTEST-KUBE-X").Run()
	})
	run("iptables", "-w", "-t", "nat", "-N", "ASTEST-KUBE-X")
	run("iptables", "-w", "-t", "nat", "-I", "POSTROUTING", "-j", "ASTEST-KUBE-X")
	run("ip", "link", "add", "astestbr0", "type", "bridge")

	require.NoError(t, s.Restore())
	out, err := exec.Command("iptables-save", "-t", "nat").Output()
	require.NoError(t, err)
	assert.NotContains(t, string(out), "ASTEST-KUBE-X")
	assert.Error(t, exec.Command("ip", "link", "show", "astestbr0").Run(), "the bridge made after Save is gone")
}

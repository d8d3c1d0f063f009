// Package kube runs the runtime image on a real one-node Kubernetes
// cluster started here: etcd and containerd from Debian's packages,
// kube-apiserver, kube-controller-manager, kube-scheduler, the kubelet,
// kube-proxy and CoreDNS built from the Go module proxy
// (scripts/kube-deps.sh), pods on a CNI bridge of the test's own, and the
// image `actionctl build` makes (the same as e2e/container's) moved into
// containerd with no registry. The tests apply deploy/kubernetes'
// manifests and drive the pods with the Go client, and run the unmodified
// OpenHands KubernetesRuntime against the cluster.
//
// `make e2e-kube` runs it; it needs root, and it runs only when
// E2E_KUBE=1 (so `go test ./...` never starts a cluster). Every listener
// is on 127.0.0.1 or the bridge. The kubelet and containerd run in a mount
// namespace of their own, with the three host sysctls the kubelet would
// rewrite bind-mounted over, so the host keeps its values and every
// mount they make goes with the namespace. TestMain removes what the node
// adds to the machine: its cgroups, the bridge, the KUBE-* and CNI-*
// iptables chains (the kubelet's and kube-proxy's), ip_forward. One run at a time: a run ends whatever an
// earlier, killed run of it left behind.
package kube

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/actionserver/actionserver/e2e/internal/runtimeimage"
)

// env is what TestMain set up, for the tests.
var env struct {
	root    string // the checkout
	tools   runtimeimage.Tools
	bin     string // action-server and actionctl
	image   string // the runtime image, in containerd as in podman
	cluster *cluster
}

func TestMain(m *testing.M) {
	os.Exit(setUpAndRun(m))
}

func setUpAndRun(m *testing.M) int {
	if os.Getenv("E2E_KUBE") != "1" {
		fmt.Fprintln(os.Stderr, "e2e/kube: SKIPPED: it starts a cluster; run it with `make e2e-kube` (E2E_KUBE=1)")
		return 0
	}
	if os.Getuid() != 0 {
		return fail(fmt.Errorf("a kubelet and containerd need root"))
	}
	log := func(format string, a ...any) { fmt.Fprintf(os.Stderr, "e2e/kube: "+format+"\n", a...) }
	began := time.Now()
	root, err := filepath.Abs("../..")
	if err != nil {
		return fail(err)
	}
	env.root = root

	start := time.Now()
	vars, err := runtimeimage.ScriptVars(exec.Command(filepath.Join(root, "scripts/kube-deps.sh")))
	if err != nil {
		return fail(fmt.Errorf("install the cluster's tools: %w", err))
	}
	d := deps{bin: vars["KUBE_BIN"], etcd: vars["KUBE_ETCD"], containerd: vars["KUBE_CONTAINERD"], cni: vars["KUBE_CNI"], coredns: vars["KUBE_COREDNS"]}
	if env.tools, err = runtimeimage.Install(root); err != nil {
		return fail(err)
	}
	log("tools ready in %.0fs", time.Since(start).Seconds())

	// Not named like the cluster's state: a run sweeps those away.
	if env.bin, err = os.MkdirTemp("", "as-e2e-k8s-bin-"); err != nil {
		return fail(err)
	}
	defer os.RemoveAll(env.bin)
	if err := env.tools.BuildBinaries(env.bin); err != nil {
		return fail(err)
	}
	start = time.Now()
	base, err := env.tools.BaseImage("bookworm")
	if err != nil {
		return fail(err)
	}
	if env.image, err = runtimeimage.BuildImage(filepath.Join(env.bin, "actionctl"), base, "--plugins", "agent_skills,jupyter"); err != nil {
		return fail(err)
	}
	log("runtime image %s in %.0fs", env.image, time.Since(start).Seconds())

	start = time.Now()
	c, err := startCluster(d, log)
	if err != nil {
		return fail(err)
	}
	defer func() {
		start := time.Now()
		c.stop()
		log("cluster stopped and cleaned up in %.0fs; the whole run took %.0fs", time.Since(start).Seconds(), time.Since(began).Seconds())
	}()
	env.cluster = c
	log("cluster up in %.0fs", time.Since(start).Seconds())

	start = time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	err = c.importImage(ctx, env.image)
	cancel()
	if err != nil {
		return fail(err)
	}
	log("runtime image moved into containerd in %.0fs", time.Since(start).Seconds())
	return m.Run()
}

func fail(err error) int {
	fmt.Fprintf(os.Stderr, "e2e/kube: FAILED: %v\n", err)
	return 1
}

// podmanCmd is the podman that holds the images.
func podmanCmd(ctx context.Context, args ...string) *exec.Cmd {
	return exec.CommandContext(ctx, env.tools.Podman, args...)
}

package kube

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestOpenHands_KubernetesRuntimeDrivesTheImage runs the unmodified
// OpenHands host's KubernetesRuntime (openhands-ai 0.62.0) against the
// cluster (openhands/test_kubernetes_runtime.py). The host creates a pod
// running the image with its launcher's command line, a Service and a
// volume claim, and reaches the server at the Service's cluster name. It
// runs as it would in a pod of the cluster: in a mount namespace of its
// own with the in-cluster service-account files and a resolv.conf naming
// the cluster's DNS. The claim binds a volume this test provides (a
// storage class with no provisioner, a host-path volume in the
// cluster's state), as a cluster administrator provides them.
func TestOpenHands_KubernetesRuntimeDrivesTheImage(t *testing.T) {
	c := env.cluster
	ctx := context.Background()
	const ns, class = "as-e2e-openhands", "as-e2e-static"
	// The host runs the server as root: no Pod Security label.
	namespaceWith(t, ns, "")
	_, err := c.kubectl(ctx, []byte(fmt.Sprintf(`apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: %s
  labels: {as-e2e: "1"}
provisioner: kubernetes.io/no-provisioner
volumeBindingMode: Immediate
`, class)), "apply", "-f", "-")
	require.NoError(t, err)

	sa := filepath.Join(c.dir, "openhands", "serviceaccount")
	require.NoError(t, os.MkdirAll(sa, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(sa, "token"), []byte(c.token), 0o600))
	ca, err := os.ReadFile(filepath.Join(c.dir, "pki", "ca.crt"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(sa, "ca.crt"), ca, 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(sa, "namespace"), []byte(ns), 0o600))
	resolv := filepath.Join(c.dir, "openhands", "resolv.conf")
	require.NoError(t, os.WriteFile(resolv, []byte("nameserver "+dnsAddress+"\n"), 0o644))

	// Only 0.62.0: 1.6.0 keeps the class as legacy code, and with the
	// Kubernetes client its release resolves to (37.x) it fails before it
	// reaches a cluster, building its volume claim with a type that client
	// no longer takes.
	for _, version := range []string{"0.62.0"} {
		t.Run(version, func(t *testing.T) {
			setup := exec.Command(filepath.Join(env.root, "compat/openhands/setup.sh"), version)
			setup.Stderr = os.Stderr
			out, err := setup.Output()
			if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == 3 {
				t.Skip("no Python 3.12 or later on this machine: the OpenHands host cannot run")
			}
			require.NoError(t, err, "compat/openhands/setup.sh %s", version)
			venv := strings.TrimSpace(string(out))

			pv := "as-e2e-openhands-" + strings.ReplaceAll(version, ".", "-")
			dir := filepath.Join(c.dir, "volumes", pv)
			require.NoError(t, os.MkdirAll(dir, 0o777))
			_, err = c.kubectl(ctx, []byte(fmt.Sprintf(`apiVersion: v1
kind: PersistentVolume
metadata:
  name: %s
  labels: {as-e2e: "1"}
spec:
  storageClassName: %s
  capacity: {storage: 1Gi}
  accessModes: [ReadWriteOnce]
  persistentVolumeReclaimPolicy: Retain
  hostPath: {path: %s, type: Directory}
`, pv, class, dir)), "apply", "-f", "-")
			require.NoError(t, err)

			// The host's view of a pod: the service-account files where
			// the in-cluster configuration reads them, and the cluster's
			// DNS, in a mount namespace that goes with the process.
			script := `set -e
mount -t tmpfs -o mode=0755 tmpfs /run
mkdir -p /run/secrets/kubernetes.io
cp -r "$SA_DIR" /run/secrets/kubernetes.io/serviceaccount
mount --bind "$RESOLV" /etc/resolv.conf
exec "$@"`
			tctx, cancel := context.WithTimeout(ctx, 15*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(tctx, "unshare", "--mount", "--propagation", "private", "--",
				"sh", "-c", script, "sh",
				filepath.Join(venv, "bin/python"), "-m", "pytest", "-q", "-p", "no:cacheprovider", "-x")
			cmd.Dir = filepath.Join(env.root, "e2e/kube/openhands")
			cmd.Env = append(os.Environ(),
				"SA_DIR="+sa,
				"RESOLV="+resolv,
				"RUNTIME_IMAGE="+env.image,
				"KUBE_NAMESPACE="+ns,
				"KUBE_STORAGE_CLASS="+class,
				"KUBERNETES_SERVICE_HOST=127.0.0.1",
				"KUBERNETES_SERVICE_PORT="+strconv.Itoa(c.apiPort),
				"HOME="+t.TempDir(),   // the host writes its settings under ~/.openhands
				"TMPDIR="+t.TempDir(), // and its port locks under the temporary directory
			)
			start := time.Now()
			pytest, err := cmd.CombinedOutput()
			t.Logf("openhands-ai %s (%.0fs):\n%s", version, time.Since(start).Seconds(), pytest)
			require.NoError(t, err)
		})
	}
}

package kube

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/actionserver/actionserver/api"
	"github.com/actionserver/actionserver/client"
)

// serverPort is the port the manifests' servers listen on.
const serverPort = 8000

// namespace makes a namespace that enforces the restricted Pod Security
// Standard, removed when the test ends (and by the cluster's stop, by
// its label, if the test is killed).
func namespace(t *testing.T, name string) {
	t.Helper()
	namespaceWith(t, name, `
    pod-security.kubernetes.io/enforce: restricted
    pod-security.kubernetes.io/enforce-version: latest`)
}

// namespaceWith makes a namespace with more labels (YAML lines).
func namespaceWith(t *testing.T, name, labels string) {
	t.Helper()
	c := env.cluster
	yaml := fmt.Sprintf(`apiVersion: v1
kind: Namespace
metadata:
  name: %s
  labels:
    as-e2e: "1"%s
`, name, labels)
	_, err := c.kubectl(context.Background(), []byte(yaml), "apply", "-f", "-")
	require.NoError(t, err)
	// The ServiceAccount admission refuses pods until the controller
	// manager made the namespace's default account.
	require.NoError(t, c.waitFor("namespace "+name+"'s service account", time.Minute, func() error {
		_, err := c.kubectl(context.Background(), nil, "-n", name, "get", "serviceaccount", "default")
		return err
	}))
	t.Cleanup(func() {
		if _, err := c.kubectl(context.Background(), nil, "delete", "namespace", name, "--wait=true", "--timeout=90s"); err != nil {
			t.Logf("delete namespace %s: %v", name, err)
		}
	})
}

// manifest reads a shipped manifest with its image replaced by the one
// this run built.
func manifest(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(env.root, "deploy/kubernetes", name))
	require.NoError(t, err)
	image := regexp.MustCompile(`(?m)^(\s*image:\s*)action-server-runtime:latest\s*$`)
	require.True(t, image.Match(b), "%s names the image action-server-runtime:latest", name)
	return image.ReplaceAll(b, []byte("${1}"+env.image))
}

// pod is what the tests need of a pod.
type pod struct {
	Name  string
	IP    string
	Ready bool
	UID   string
	// Restarts is the server container's restart count.
	Restarts int
	Deleting bool
}

// pods lists the pods of a namespace with the selector.
func pods(ctx context.Context, ns, selector string) ([]pod, error) {
	out, err := env.cluster.kubectl(ctx, nil, "-n", ns, "get", "pods", "-l", selector, "-o", "json")
	if err != nil {
		return nil, err
	}
	var list struct {
		Items []struct {
			Metadata struct {
				Name              string  `json:"name"`
				UID               string  `json:"uid"`
				DeletionTimestamp *string `json:"deletionTimestamp"`
			} `json:"metadata"`
			Status struct {
				PodIP      string `json:"podIP"`
				Conditions []struct {
					Type, Status string
				} `json:"conditions"`
				ContainerStatuses []struct {
					RestartCount int `json:"restartCount"`
				} `json:"containerStatuses"`
			} `json:"status"`
		} `json:"items"`
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		return nil, err
	}
	var res []pod
	for _, it := range list.Items {
		p := pod{Name: it.Metadata.Name, UID: it.Metadata.UID, IP: it.Status.PodIP, Deleting: it.Metadata.DeletionTimestamp != nil}
		for _, c := range it.Status.Conditions {
			if c.Type == "Ready" && c.Status == "True" {
				p.Ready = true
			}
		}
		for _, cs := range it.Status.ContainerStatuses {
			p.Restarts += cs.RestartCount
		}
		res = append(res, p)
	}
	return res, nil
}

// readyPod waits for a Ready pod with the selector that is not being
// deleted and is not one of the pods named in not.
func readyPod(t *testing.T, ns, selector string, timeout time.Duration, not ...string) pod {
	t.Helper()
	var found pod
	require.NoError(t, env.cluster.waitFor("a Ready pod "+selector+" in "+ns, timeout, func() error {
		ps, err := pods(context.Background(), ns, selector)
		if err != nil {
			return err
		}
		for _, p := range ps {
			if p.Ready && !p.Deleting && p.IP != "" && !contains(not, p.Name) {
				found = p
				return nil
			}
		}
		return fmt.Errorf("pods: %+v", ps)
	}))
	return found
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// secretValue reads one key of a Secret.
func secretValue(t *testing.T, ns, name, key string) string {
	t.Helper()
	out, err := env.cluster.kubectl(context.Background(), nil, "-n", ns, "get", "secret", name, "-o", "jsonpath={.data."+strings.ReplaceAll(key, ".", `\.`)+"}")
	require.NoError(t, err)
	v, err := base64.StdEncoding.DecodeString(strings.TrimSpace(out))
	require.NoError(t, err)
	return string(v)
}

// get fetches a path at a pod, with the key when not empty.
func get(ctx context.Context, ip, path, key string) (int, string, error) {
	h := map[string]string{}
	if key != "" {
		h["X-Session-API-Key"] = key
	}
	return request(ctx, http.MethodGet, ip, path, h, "")
}

// claim posts a claim to a pod with the init token.
func claim(ctx context.Context, ip, token, body string) (int, string, error) {
	return request(ctx, http.MethodPost, ip, "/claim",
		map[string]string{"Authorization": "Bearer " + token, "Content-Type": "application/json"}, body)
}

// request sends a request to the server of the pod at ip.
func request(ctx context.Context, method, ip, path string, header map[string]string, body string) (int, string, error) {
	req, err := http.NewRequestWithContext(ctx, method, fmt.Sprintf("http://%s:%d%s", ip, serverPort, path), strings.NewReader(body))
	if err != nil {
		return 0, "", err
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

// rollOut makes a restricted namespace, a Secret holding one key and
// value, and applies a manifest there, and waits for its Deployment.
func rollOut(t *testing.T, ns, secret, key, value string, manifest []byte, deployment string) {
	t.Helper()
	namespace(t, ns)
	c := env.cluster
	ctx := context.Background()
	_, err := c.kubectl(ctx, nil, "-n", ns, "create", "secret", "generic", secret, "--from-literal="+key+"="+value)
	require.NoError(t, err)
	_, err = c.kubectl(ctx, manifest, "-n", ns, "apply", "-f", "-")
	require.NoError(t, err, "the restricted namespace admits %s", deployment)
	start := time.Now()
	_, err = c.kubectl(ctx, nil, "-n", ns, "rollout", "status", "deployment/"+deployment, "--timeout=180s")
	require.NoError(t, err)
	t.Logf("%s rolled out in %.1fs", deployment, time.Since(start).Seconds())
}

// The restricted manifest, as shipped, in a namespace that enforces the
// restricted Pod Security Standard: it rolls out with its probes, and the
// Go client drives the server at the pod's IP with the key from the Secret.
func TestRestricted_RollsOutAndTheClientDrivesIt(t *testing.T) {
	const ns = "as-e2e-restricted"
	ctx := context.Background()
	rollOut(t, ns, "action-server", "session-api-key", randomHex(24), manifest(t, "action-server-restricted.yaml"), "action-server-restricted")

	p := readyPod(t, ns, "app.kubernetes.io/name=action-server-restricted", time.Minute)
	assert.Zero(t, p.Restarts, "the liveness probe never restarted it")
	// The client takes the key where an orchestrator would: the Secret.
	key := secretValue(t, ns, "action-server", "session-api-key")

	base := fmt.Sprintf("http://%s:%d", p.IP, serverPort)
	for _, path := range []string{"/livez", "/readyz", "/alive"} {
		code, body, err := get(ctx, p.IP, path, "")
		require.NoError(t, err)
		assert.Equal(t, http.StatusOK, code, "%s: %s", path, body)
	}
	_, err := client.New(base).Run(ctx, "true", client.RunOptions{})
	require.Error(t, err, "no key, no command")

	cl := client.New(base, client.WithAPIKey(key))
	t.Run("run", func(t *testing.T) {
		out, err := cl.Run(ctx, "id -u; cd /workspace && pwd", client.RunOptions{})
		require.NoError(t, err)
		assert.Equal(t, 0, out.Metadata.ExitCode)
		assert.Equal(t, "10001\n/workspace", strings.TrimSpace(out.Content), "the pod's uid, in the workspace volume")
	})
	t.Run("files", func(t *testing.T) {
		require.NoError(t, cl.Write(ctx, "/workspace/notes/hello.txt", "from the cluster\n"))
		got, err := cl.Read(ctx, "/workspace/notes/hello.txt")
		require.NoError(t, err)
		assert.Contains(t, got, "from the cluster")
		names, err := cl.ListFiles(ctx, "/workspace/notes")
		require.NoError(t, err)
		assert.Contains(t, names, "hello.txt")
		out, err := cl.Run(ctx, "touch /usr/local/x 2>&1; echo rc=$?", client.RunOptions{})
		require.NoError(t, err)
		assert.Contains(t, out.Content, "Read-only file system", "the root file system is read-only")
	})
	t.Run("sse", func(t *testing.T) {
		cmd, err := cl.StartCommand(ctx, "default", "for i in 1 2 3 4 5; do echo line $i; sleep 0.1; done")
		require.NoError(t, err)
		sctx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		var text strings.Builder
		var exit *client.StreamEvent
		for ev := range cl.Stream(sctx, "default", cmd.ID, client.StreamOptions{}) {
			require.NoError(t, ev.Err)
			switch ev.Kind {
			case "output":
				text.WriteString(ev.Data)
			case "exit":
				exit = &ev
			}
		}
		require.NotNil(t, exit, "the stream ends with the exit event")
		assert.Contains(t, text.String(), "line 1")
		assert.Contains(t, text.String(), "line 5")
		require.NotNil(t, exit.Command.ExitCode)
		assert.Equal(t, 0, *exit.Command.ExitCode)
	})
	t.Run("metrics", func(t *testing.T) {
		code, _, err := get(ctx, p.IP, "/metrics", "")
		require.NoError(t, err)
		assert.Equal(t, http.StatusForbidden, code, "metrics are behind the key")
		code, body, err := get(ctx, p.IP, "/metrics", key)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, code)
		for _, name := range []string{"action_server_http_requests_total", "action_server_http_request_duration_seconds_bucket"} {
			assert.Contains(t, body, name)
		}
		assert.Regexp(t, `action_server_http_requests_total\{[^}]*route="/execute_action"`, body, "the actions above are counted by route")
	})
}

// A pod deleted while a client follows a command's output drains: its
// readiness turns 503 at once, the command ends and the stream gets the
// exit event, and the Deployment's replacement comes up ready.
func TestDrain_PodDeletedDuringAStream(t *testing.T) {
	const ns = "as-e2e-drain"
	c := env.cluster
	ctx := context.Background()
	key := randomHex(24)
	rollOut(t, ns, "action-server", "session-api-key", key, manifest(t, "action-server-restricted.yaml"), "action-server-restricted")
	const sel = "app.kubernetes.io/name=action-server-restricted"
	old := readyPod(t, ns, sel, time.Minute)
	cl := client.New(fmt.Sprintf("http://%s:%d", old.IP, serverPort), client.WithAPIKey(key))

	cmd, err := cl.StartCommand(ctx, "default", "i=0; while :; do i=$((i+1)); echo tick $i; sleep 0.1; done")
	require.NoError(t, err)
	sctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	events := cl.Stream(sctx, "default", cmd.ID, client.StreamOptions{})
	for ev := range events {
		require.NoError(t, ev.Err)
		// A terminal's lines stay in the live tail until they can no
		// longer change on its screen.
		if ev.Kind == "output" && strings.Contains(ev.Data, "tick 3") || ev.Kind == "tail" && strings.Contains(ev.Tail, "tick 3") {
			break
		}
	}

	deleted := time.Now()
	_, err = c.kubectl(ctx, nil, "-n", ns, "delete", "pod", old.Name, "--wait=false")
	require.NoError(t, err)
	// Readiness: 503 while the server drains (or the pod is gone).
	var flip time.Duration
	for time.Since(deleted) < 20*time.Second {
		code, _, err := get(ctx, old.IP, "/readyz", "")
		if err != nil || code == http.StatusServiceUnavailable {
			flip = time.Since(deleted)
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	require.NotZero(t, flip, "/readyz never turned 503 after the delete")
	t.Logf("/readyz unready %.0f ms after kubectl delete returned", float64(flip.Milliseconds()))

	var exit *client.StreamEvent
	var reconnectErr error
	for ev := range events {
		if ev.Kind == "exit" {
			exit = &ev
			cancel()
		}
		if ev.Kind == "reconnect" && exit == nil {
			reconnectErr = ev.Err
			cancel() // the server is gone before telling the end
		}
	}
	require.NotNil(t, exit, "the stream got the command's end before the server left (last error: %v)", reconnectErr)
	t.Logf("exit event %.1fs after the delete: %+v", time.Since(deleted).Seconds(), exit.Command)
	assert.False(t, exit.Command.Running)

	repl := readyPod(t, ns, sel, 2*time.Minute, old.Name)
	t.Logf("replacement %s Ready %.1fs after the delete", repl.Name, time.Since(deleted).Seconds())
	out, err := client.New(fmt.Sprintf("http://%s:%d", repl.IP, serverPort), client.WithAPIKey(key)).Run(ctx, "echo replaced", client.RunOptions{})
	require.NoError(t, err)
	assert.Equal(t, "replaced", strings.TrimSpace(out.Content))
	require.Eventually(t, func() bool {
		ps, err := pods(ctx, ns, sel)
		return err == nil && !slicesContainsPod(ps, old.Name)
	}, 30*time.Second, 200*time.Millisecond, "the deleted pod is gone within its grace period")
}

func slicesContainsPod(ps []pod, name string) bool {
	for _, p := range ps {
		if p.Name == name {
			return true
		}
	}
	return false
}

// The warm pool's manifest: its pods boot unclaimed and answer only the
// probes; one is claimed with a key, its environment and working
// directory, then its key is rotated while a command runs; taken out of
// the pool by its label, it is replaced, and goes on serving its owner.
func TestPool_ClaimRotateAndRefill(t *testing.T) {
	const ns = "as-e2e-pool"
	c := env.cluster
	ctx := context.Background()
	token := randomHex(24)
	m := strings.Replace(string(manifest(t, "action-server-pool.yaml")), "replicas: 3", "replicas: 2", 1)
	rollOut(t, ns, "action-server-init", "init-token", token, []byte(m), "action-server-pool")
	const sel = "app.kubernetes.io/name=action-server-pool"
	p := readyPod(t, ns, sel, time.Minute)

	code, body, err := get(ctx, p.IP, "/readyz", "")
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, code, "an unclaimed pod is ready to be claimed: %s", body)
	code, body, err = get(ctx, p.IP, "/server_info", "")
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, code, body)
	_, err = client.New(fmt.Sprintf("http://%s:%d", p.IP, serverPort)).Run(ctx, "true", client.RunOptions{})
	require.Error(t, err, "nothing runs before the claim")
	assert.Contains(t, err.Error(), "not claimed")
	code, _, err = claim(ctx, p.IP, "wrong-"+token, `{"api_key": "k"}`)
	require.NoError(t, err)
	assert.Equal(t, http.StatusForbidden, code, "a wrong init token claims nothing")

	key1, key2 := randomHex(16), randomHex(16)
	code, body, err = claim(ctx, p.IP, token, fmt.Sprintf(`{"api_key": %q, "env": {"OWNER": "tenant-42"}, "working_dir": "/workspace"}`, key1))
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, code, body)
	assert.JSONEq(t, `{"rotated": false}`, body)
	base := fmt.Sprintf("http://%s:%d", p.IP, serverPort)
	c1 := client.New(base, client.WithAPIKey(key1))
	out, err := c1.Run(ctx, `echo "$OWNER in $PWD"`, client.RunOptions{})
	require.NoError(t, err)
	assert.Equal(t, "tenant-42 in /workspace", strings.TrimSpace(out.Content))

	_, err = c1.CreateSession(ctx, api.CreateSessionRequest{ID: "work"})
	require.NoError(t, err)
	long, err := c1.StartCommand(ctx, "work", "sleep 300")
	require.NoError(t, err)
	code, body, err = claim(ctx, p.IP, token, fmt.Sprintf(`{"api_key": %q}`, key2))
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, code, body)
	assert.JSONEq(t, `{"rotated": true}`, body)
	_, err = c1.Run(ctx, "true", client.RunOptions{})
	require.Error(t, err, "the old key is refused at once")
	c2 := client.New(base, client.WithAPIKey(key2))
	still, err := c2.Command(ctx, "work", long.ID)
	require.NoError(t, err)
	assert.True(t, still.Running, "the command runs on through the rotation")

	// Out of the pool: the ReplicaSet lets go of it and boots another.
	_, err = c.kubectl(ctx, nil, "-n", ns, "label", "pod", p.Name, "app.kubernetes.io/name=action-server-claimed", "--overwrite")
	require.NoError(t, err)
	start := time.Now()
	require.NoError(t, c.waitFor("the pool to refill", 2*time.Minute, func() error {
		ps, err := pods(ctx, ns, sel)
		if err != nil {
			return err
		}
		ready := 0
		for _, q := range ps {
			if q.Ready && !q.Deleting {
				ready++
			}
		}
		if ready < 2 {
			return fmt.Errorf("%d of 2 pool pods ready", ready)
		}
		return nil
	}))
	t.Logf("pool refilled %.1fs after the claimed pod left it", time.Since(start).Seconds())
	out, err = c2.Run(ctx, `echo "$OWNER"`, client.RunOptions{})
	require.NoError(t, err)
	assert.Equal(t, "tenant-42", strings.TrimSpace(out.Content), "the claimed pod goes on serving its owner")
	still, err = c2.Command(ctx, "work", long.ID)
	require.NoError(t, err)
	assert.True(t, still.Running)
}

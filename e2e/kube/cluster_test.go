package kube

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/actionserver/actionserver/internal/freeport"
	"github.com/actionserver/actionserver/internal/hostnet"
)

// The cluster's fixed names. Every process, directory and cgroup it makes
// carries one of them, so that a run can find what an earlier, killed run
// left behind.
const (
	stateDirPrefix = "as-e2e-kube-" // under os.TempDir()
	cgroupRoot     = "as-e2e-kube"  // the kubelet's --cgroup-root, in every hierarchy
	bridgeName     = "askube0"
	nodeName       = "as-e2e-node"
	// podSubnet is the pods' /24 on the cluster's own bridge; the host
	// reaches pods there directly, without forwarding or kube-proxy.
	podSubnet   = "10.231.77.0/24"
	serviceCIDR = "10.231.78.0/24"
	pauseImage  = "localhost/as-e2e-pause:catatonit"
)

// The host's sysctls the kubelet rewrites when they differ from what it
// wants; inside the node's mount namespace these files are bind-mounted
// over them already holding its values, so the host keeps its own.
var kubeletSysctls = map[string]string{
	"/proc/sys/vm/overcommit_memory": "1",
	"/proc/sys/kernel/panic":         "10",
	"/proc/sys/kernel/panic_on_oops": "1",
}

// proxySysctls are the ones kube-proxy may write (localhost node ports,
// which its configuration turns off); they are bind-mounted over with the
// host's own values, so a write lands in the copy.
var proxySysctls = []string{"/proc/sys/net/ipv4/conf/all/route_localnet"}

// dnsAddress is where the cluster's DNS (CoreDNS, with its kubernetes
// plugin) answers, for processes outside the cluster given a resolv.conf
// naming it: a loopback address of its own, since a resolver asks port 53.
const dnsAddress = "127.0.0.77"

// Directories the node writes beneath whatever its code says, hidden under
// a tmpfs in its mount namespace: containerd's shim sockets, the network
// namespaces, libcni's cache, the kubelet's /var/log/containers links.
var nodeScratch = []string{"/run/containerd", "/run/netns", "/var/lib/cni", "/var/log"}

// deps is what scripts/kube-deps.sh printed.
type deps struct {
	bin        string // Kubernetes' binaries
	etcd       string
	containerd string // directory of containerd, its shim and ctr
	cni        string // CNI plugins
	coredns    string
}

// cluster is one node: etcd, the control plane, containerd, a kubelet,
// kube-proxy and CoreDNS, every listener on a loopback address or the
// bridge, all state in dir.
type cluster struct {
	deps       deps
	dir        string
	token      string // admin token, in system:masters
	kubeconfig string
	apiPort    int
	host       *hostnet.State
	holder     *exec.Cmd // keeps the node's mount namespace
	procs      []*exec.Cmd
	containerd *exec.Cmd // among procs: before it stops, what it runs must end
	madeDirs   []string  // mount points made on the host, removed at the end
	log        func(string, ...any)
}

// startCluster brings the node up and waits until it is Ready.
func startCluster(d deps, log func(string, ...any)) (c *cluster, err error) {
	sweepEarlierRuns(log)
	if err := checkSubnetFree(); err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", stateDirPrefix)
	if err != nil {
		return nil, err
	}
	host, err := hostnet.SaveOf([]string{"KUBE-", "CNI-"}, bridgeName)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	c = &cluster{deps: d, dir: dir, host: host, token: randomHex(16), log: log}
	defer func() {
		if err != nil {
			c.logTails()
			c.stop()
			c = nil
		}
	}()
	for _, sub := range []string{"pki", "etcd", "containerd", "cni/net.d", "cni/ipam", "kubelet", "pod-logs", "sysctl", "logs"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o700); err != nil {
			return c, err
		}
	}
	_, svcNet, _ := net.ParseCIDR(serviceCIDR)
	firstSvc := slices.Clone(svcNet.IP.To4())
	firstSvc[3]++
	if err := writePKI(filepath.Join(dir, "pki"), firstSvc); err != nil {
		return c, fmt.Errorf("certificates: %w", err)
	}
	if err := c.startControlPlane(); err != nil {
		return c, err
	}
	if err := c.startNode(); err != nil {
		return c, err
	}
	return c, nil
}

// startControlPlane starts etcd, the API server, the controller manager
// and the scheduler, and waits for the API server.
func (c *cluster) startControlPlane() error {
	ports, err := freePorts(5)
	if err != nil {
		return err
	}
	etcdClient, etcdPeer, api, cm, sched := ports[0], ports[1], ports[2], ports[3], ports[4]
	c.apiPort = api
	pki := filepath.Join(c.dir, "pki")
	tokens := filepath.Join(pki, "tokens.csv")
	if err := os.WriteFile(tokens, []byte(c.token+`,admin,admin,"system:masters"`+"\n"), 0o600); err != nil {
		return err
	}
	c.kubeconfig = filepath.Join(c.dir, "kubeconfig")
	kc := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: e2e
  cluster:
    server: https://127.0.0.1:%d
    certificate-authority: %s
users:
- name: admin
  user:
    token: %s
contexts:
- name: e2e
  context: {cluster: e2e, user: admin}
current-context: e2e
`, api, filepath.Join(pki, "ca.crt"), c.token)
	if err := os.WriteFile(c.kubeconfig, []byte(kc), 0o600); err != nil {
		return err
	}
	local := func(p int) string { return "http://127.0.0.1:" + strconv.Itoa(p) }
	if err := c.start("etcd", nil, c.deps.etcd,
		"--name", "e2e", "--data-dir", filepath.Join(c.dir, "etcd"),
		"--listen-client-urls", local(etcdClient), "--advertise-client-urls", local(etcdClient),
		"--listen-peer-urls", local(etcdPeer), "--initial-advertise-peer-urls", local(etcdPeer),
		"--initial-cluster", "e2e="+local(etcdPeer), "--log-level", "warn"); err != nil {
		return err
	}
	if err := c.start("kube-apiserver", nil, filepath.Join(c.deps.bin, "kube-apiserver"),
		"--etcd-servers", local(etcdClient),
		"--bind-address", "127.0.0.1", "--advertise-address", "127.0.0.1",
		"--secure-port", strconv.Itoa(api),
		"--tls-cert-file", filepath.Join(pki, "apiserver.crt"),
		"--tls-private-key-file", filepath.Join(pki, "apiserver.key"),
		"--client-ca-file", filepath.Join(pki, "ca.crt"),
		"--token-auth-file", tokens,
		"--authorization-mode", "RBAC",
		"--service-account-issuer", "https://kubernetes.default.svc",
		"--service-account-key-file", filepath.Join(pki, "sa.pub"),
		"--service-account-signing-key-file", filepath.Join(pki, "sa.key"),
		"--service-cluster-ip-range", serviceCIDR,
		// The kubernetes Service would point at 127.0.0.1, which nothing
		// in a pod can reach; no test needs it.
		"--endpoint-reconciler-type", "none",
		"--v", "1"); err != nil {
		return err
	}
	if err := c.waitFor("the API server", 90*time.Second, func() error {
		_, err := c.kubectl(context.Background(), nil, "get", "--raw", "/readyz")
		return err
	}); err != nil {
		return err
	}
	if err := c.start("kube-controller-manager", nil, filepath.Join(c.deps.bin, "kube-controller-manager"),
		"--kubeconfig", c.kubeconfig, "--bind-address", "127.0.0.1", "--secure-port", strconv.Itoa(cm),
		"--leader-elect=false", "--use-service-account-credentials=false",
		"--service-account-private-key-file", filepath.Join(pki, "sa.key"),
		"--root-ca-file", filepath.Join(pki, "ca.crt"),
		"--v", "1"); err != nil {
		return err
	}
	return c.start("kube-scheduler", nil, filepath.Join(c.deps.bin, "kube-scheduler"),
		"--kubeconfig", c.kubeconfig, "--bind-address", "127.0.0.1", "--secure-port", strconv.Itoa(sched),
		"--leader-elect=false", "--v", "1")
}

// startNode starts containerd and the kubelet in a mount namespace of
// their own, loads the pause image and waits until the node is Ready.
func (c *cluster) startNode() error {
	// The holder keeps the namespace; when it and everything entered into
	// it are gone, so are the node's mounts (overlays, tmpfs volumes,
	// network namespace pins), with nothing to unmount on the host.
	for _, d := range nodeScratch {
		if _, err := os.Stat(d); errors.Is(err, os.ErrNotExist) {
			if err := os.MkdirAll(d, 0o755); err != nil {
				return err
			}
			c.madeDirs = append(c.madeDirs, d)
		}
	}
	c.holder = exec.Command("unshare", "--mount", "--propagation", "private", "--", "sleep", "infinity")
	c.holder.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := c.holder.Start(); err != nil {
		return fmt.Errorf("start the node's mount namespace: %w", err)
	}
	ns := "/proc/" + strconv.Itoa(c.holder.Process.Pid) + "/ns/mnt"
	if err := c.waitFor("the node's mount namespace", 10*time.Second, func() error {
		self, err := os.Readlink("/proc/self/ns/mnt")
		if err != nil {
			return err
		}
		if other, err := os.Readlink(ns); err != nil || other == self {
			return fmt.Errorf("not yet unshared")
		}
		return nil
	}); err != nil {
		return err
	}
	inNode := func(args ...string) error {
		out, err := exec.Command("nsenter", append([]string{"--mount=" + ns, "--"}, args...)...).CombinedOutput()
		if err != nil {
			return fmt.Errorf("%s: %w: %s", strings.Join(args, " "), err, out)
		}
		return nil
	}
	for _, d := range nodeScratch {
		if err := inNode("mount", "-t", "tmpfs", "-o", "mode=0755", "tmpfs", d); err != nil {
			return err
		}
	}
	sysctls := maps.Clone(kubeletSysctls)
	for _, path := range proxySysctls {
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		sysctls[path] = strings.TrimSpace(string(b))
	}
	for path, value := range sysctls {
		f := filepath.Join(c.dir, "sysctl", strings.ReplaceAll(strings.TrimPrefix(path, "/proc/sys/"), "/", "."))
		if err := os.WriteFile(f, []byte(value+"\n"), 0o644); err != nil {
			return err
		}
		if err := inNode("mount", "--bind", f, path); err != nil {
			return err
		}
	}

	if err := c.writeNodeConfig(); err != nil {
		return err
	}
	nsenter := func(name string, args ...string) []string {
		return append([]string{"--mount=" + ns, "--", name}, args...)
	}
	path := c.deps.containerd + ":" + os.Getenv("PATH")
	if err := c.start("containerd", []string{"PATH=" + path}, "nsenter",
		nsenter(filepath.Join(c.deps.containerd, "containerd"), "--config", filepath.Join(c.dir, "containerd", "config.toml"))...); err != nil {
		return err
	}
	c.containerd = c.procs[len(c.procs)-1]
	if err := c.waitFor("containerd", 30*time.Second, func() error {
		_, err := c.ctr(context.Background(), nil, "version")
		return err
	}); err != nil {
		return err
	}
	if err := c.importPause(); err != nil {
		return err
	}
	if err := c.start("kubelet", []string{"PATH=" + path}, "nsenter",
		nsenter(filepath.Join(c.deps.bin, "kubelet"),
			"--config", filepath.Join(c.dir, "kubelet", "config.yaml"),
			"--kubeconfig", c.kubeconfig,
			"--root-dir", filepath.Join(c.dir, "kubelet", "root"),
			"--hostname-override", nodeName,
			"--v", "1")...); err != nil {
		return err
	}
	if err := c.waitFor("the node to be Ready", 120*time.Second, func() error {
		out, err := c.kubectl(context.Background(), nil, "get", "node", nodeName,
			"-o", `jsonpath={.status.conditions[?(@.type=="Ready")].status}`)
		if err != nil {
			return err
		}
		if strings.TrimSpace(out) != "True" {
			return fmt.Errorf("Ready is %q", out)
		}
		return nil
	}); err != nil {
		return err
	}
	// Services: kube-proxy's iptables rules, in the host's network
	// namespace (the host reaches ClusterIPs as a node does), and names
	// for them from CoreDNS.
	if err := c.start("kube-proxy", nil, "nsenter",
		nsenter(filepath.Join(c.deps.bin, "kube-proxy"), "--config", filepath.Join(c.dir, "kube-proxy.yaml"), "--v", "1")...); err != nil {
		return err
	}
	if err := c.start("coredns", nil, c.deps.coredns, "-conf", filepath.Join(c.dir, "Corefile")); err != nil {
		return err
	}
	return c.waitFor("kube-proxy and CoreDNS", 60*time.Second, func() error {
		if out, err := exec.Command("iptables", "-w", "-t", "nat", "-S", "KUBE-SERVICES").CombinedOutput(); err != nil {
			return fmt.Errorf("no KUBE-SERVICES chain yet: %s", out)
		}
		addrs, err := c.resolver().LookupHost(context.Background(), "kubernetes.default.svc.cluster.local")
		if err != nil {
			return err
		}
		if len(addrs) == 0 {
			return fmt.Errorf("no address for the kubernetes Service")
		}
		return nil
	})
}

// resolver asks the cluster's DNS.
func (c *cluster) resolver() *net.Resolver {
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, net.JoinHostPort(dnsAddress, "53"))
	}}
}

// writeNodeConfig writes containerd's, the CNI's and the kubelet's files.
func (c *cluster) writeNodeConfig() error {
	cd := filepath.Join(c.dir, "containerd")
	ports, err := freePorts(5)
	if err != nil {
		return err
	}
	// containerd's stream server, the kubelet's API and health, and
	// kube-proxy's health and metrics.
	streamPort, kubeletPort, kubeletHealth, proxyHealth, proxyMetrics := ports[0], ports[1], ports[2], ports[3], ports[4]
	containerd := fmt.Sprintf(`version = 2
root = %q
state = %q
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper"]

[grpc]
  address = %q

[plugins."io.containerd.internal.v1.opt"]
  path = %q

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = %q
  stream_server_address = "127.0.0.1"
  stream_server_port = "%d"
  # runc cannot lower oom_score_adj without CAP_SYS_RESOURCE, which root
  # lacks on this kind of machine.
  restrict_oom_score_adj = true
  disable_apparmor = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = %q
    conf_dir = %q
`, filepath.Join(cd, "root"), filepath.Join(cd, "state"), filepath.Join(cd, "containerd.sock"),
		filepath.Join(cd, "opt"), pauseImage, streamPort, c.deps.cni, filepath.Join(c.dir, "cni", "net.d"))
	if err := os.WriteFile(filepath.Join(cd, "config.toml"), []byte(containerd), 0o600); err != nil {
		return err
	}
	cni := fmt.Sprintf(`{
  "cniVersion": "1.0.0",
  "name": "as-e2e-kube",
  "plugins": [{
    "type": "bridge",
    "bridge": %q,
    "isGateway": true,
    "ipMasq": false,
    "hairpinMode": true,
    "ipam": {
      "type": "host-local",
      "dataDir": %q,
      "ranges": [[{"subnet": %q}]]
    }
  }]
}
`, bridgeName, filepath.Join(c.dir, "cni", "ipam"), podSubnet)
	if err := os.WriteFile(filepath.Join(c.dir, "cni", "net.d", "10-as-e2e-kube.conflist"), []byte(cni), 0o600); err != nil {
		return err
	}
	resolv := filepath.Join(c.dir, "kubelet", "resolv.conf")
	if err := os.WriteFile(resolv, []byte("nameserver 127.0.0.1\n"), 0o644); err != nil {
		return err
	}
	kubelet := fmt.Sprintf(`apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: 127.0.0.1
port: %d
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: %d
authentication:
  anonymous: {enabled: true}
  webhook: {enabled: false}
authorization: {mode: AlwaysAllow}
cgroupDriver: cgroupfs
cgroupRoot: /%s
containerRuntimeEndpoint: unix://%s
failSwapOn: false
resolvConf: %s
podLogsDir: %s
staticPodPath: ""
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard:
  memory.available: 50Mi
  nodefs.available: 1%%
  imagefs.available: 1%%
  nodefs.inodesFree: 1%%
serializeImagePulls: false
`, kubeletPort, kubeletHealth, cgroupRoot, filepath.Join(cd, "containerd.sock"), resolv, filepath.Join(c.dir, "pod-logs"))
	if err := os.WriteFile(filepath.Join(c.dir, "kubelet", "config.yaml"), []byte(kubelet), 0o600); err != nil {
		return err
	}
	// Conntrack settings of 0 leave the host's as they are.
	proxy := fmt.Sprintf(`apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection:
  kubeconfig: %s
hostnameOverride: %s
mode: iptables
clusterCIDR: %s
bindAddress: 127.0.0.1
healthzBindAddress: 127.0.0.1:%d
metricsBindAddress: 127.0.0.1:%d
conntrack:
  maxPerCore: 0
  min: 0
  tcpEstablishedTimeout: 0s
  tcpCloseWaitTimeout: 0s
iptables:
  localhostNodePorts: false
`, c.kubeconfig, nodeName, podSubnet, proxyHealth, proxyMetrics)
	if err := os.WriteFile(filepath.Join(c.dir, "kube-proxy.yaml"), []byte(proxy), 0o600); err != nil {
		return err
	}
	corefile := fmt.Sprintf(`cluster.local:53 {
    bind %s
    kubernetes cluster.local {
        kubeconfig %s e2e
    }
    errors
}
`, dnsAddress, c.kubeconfig)
	if err := os.WriteFile(filepath.Join(c.dir, "Corefile"), []byte(corefile), 0o600); err != nil {
		return err
	}
	// The kubelet checks that its cgroup root exists in every hierarchy.
	return makeCgroupRoot()
}

// importPause makes the pods' pause image from Debian's static catatonit
// and loads it into containerd, so that nothing is pulled.
func (c *cluster) importPause() error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ctxDir := filepath.Join(c.dir, "pause")
	if err := os.MkdirAll(ctxDir, 0o755); err != nil {
		return err
	}
	catatonit, err := exec.LookPath("catatonit")
	if err != nil {
		return fmt.Errorf("the pause image needs catatonit: %w", err)
	}
	tarball := filepath.Join(c.dir, "pause.tar")
	if out, err := exec.CommandContext(ctx, "tar", "-cf", tarball, "--transform", "s,.*,pause,", "-P", catatonit).CombinedOutput(); err != nil {
		return fmt.Errorf("pause layer: %w: %s", err, out)
	}
	if out, err := podmanCmd(ctx, "import", "--change", `ENTRYPOINT ["/pause","-P"]`, tarball, pauseImage).CombinedOutput(); err != nil {
		return fmt.Errorf("podman import the pause image: %w: %s", err, out)
	}
	return c.importImage(ctx, pauseImage)
}

// importImage moves an image from podman's store into containerd's k8s.io
// namespace, where the kubelet finds it.
func (c *cluster) importImage(ctx context.Context, image string) error {
	archive := filepath.Join(c.dir, "image.tar")
	defer os.Remove(archive)
	if out, err := podmanCmd(ctx, "save", "--format", "docker-archive", "-o", archive, image).CombinedOutput(); err != nil {
		return fmt.Errorf("podman save %s: %w: %s", image, err, out)
	}
	if _, err := c.ctr(ctx, nil, "-n", "k8s.io", "images", "import", archive); err != nil {
		return fmt.Errorf("import %s: %w", image, err)
	}
	return nil
}

// start runs a component with its output in logs/<name>.log.
func (c *cluster) start(name string, env []string, path string, args ...string) error {
	logf, err := os.Create(filepath.Join(c.dir, "logs", name+".log"))
	if err != nil {
		return err
	}
	defer logf.Close()
	cmd := exec.Command(path, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", name, err)
	}
	c.procs = append(c.procs, cmd)
	return nil
}

// freePorts picks n distinct free ports on 127.0.0.1.
func freePorts(n int) ([]int, error) {
	ports := make([]int, 0, n)
	for len(ports) < n {
		p, err := freeport.Pick("127.0.0.1")
		if err != nil {
			return nil, err
		}
		if !slices.Contains(ports, p) {
			ports = append(ports, p)
		}
	}
	return ports, nil
}

// waitFor polls check until it passes or timeout, then says what it last
// saw.
func (c *cluster) waitFor(what string, timeout time.Duration, check func() error) error {
	start := time.Now()
	deadline := start.Add(timeout)
	for {
		err := check()
		if err == nil {
			c.log("%s: up in %.1fs", what, time.Since(start).Seconds())
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("waiting for %s: %w", what, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// kubectl runs kubectl against the cluster, stdin from in when not nil.
func (c *cluster) kubectl(ctx context.Context, in []byte, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(c.deps.bin, "kubectl"), append([]string{"--kubeconfig", c.kubeconfig}, args...)...)
	if in != nil {
		cmd.Stdin = bytes.NewReader(in)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return string(out), fmt.Errorf("kubectl %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return string(out), nil
}

// ctr runs containerd's client against the node's containerd.
func (c *cluster) ctr(ctx context.Context, in []byte, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(c.deps.containerd, "ctr"),
		append([]string{"--address", filepath.Join(c.dir, "containerd", "containerd.sock")}, args...)...)
	if in != nil {
		cmd.Stdin = bytes.NewReader(in)
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("ctr %s: %w: %s", strings.Join(args, " "), err, out)
	}
	return string(out), nil
}

// logTails prints the end of each component's log, for a failed start.
func (c *cluster) logTails() {
	entries, _ := os.ReadDir(filepath.Join(c.dir, "logs"))
	for _, e := range entries {
		b, _ := os.ReadFile(filepath.Join(c.dir, "logs", e.Name()))
		if len(b) > 3000 {
			b = b[len(b)-3000:]
		}
		c.log("--- %s (end) ---\n%s", e.Name(), b)
	}
}

// stop ends the cluster and leaves the machine as it was: workloads
// first (or their shims keep running), then the kubelet, whatever still
// runs in the node's cgroups, containerd and its shims, the control plane,
// the mount namespace; then the cgroups, the bridge, the iptables chains
// and ip_forward, the directories made for mount points, and the state.
func (c *cluster) stop() {
	if c.kubeconfig != "" && c.apiPort != 0 {
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		if _, err := c.kubectl(ctx, nil, "delete", "namespace", "-l", "as-e2e=1", "--wait=true", "--timeout=80s"); err != nil {
			c.log("deleting the test namespaces: %v", err)
		}
		if _, err := c.kubectl(ctx, nil, "delete", "persistentvolume,storageclass", "-l", "as-e2e=1", "--wait=true", "--timeout=30s"); err != nil {
			c.log("deleting the test volumes: %v", err)
		}
		cancel()
	}
	// In reverse order of start: the kubelet, containerd, then the
	// control plane.
	for i := len(c.procs) - 1; i >= 0; i-- {
		p := c.procs[i]
		if p == c.containerd {
			killCgroupProcs()
			killShims(c.dir)
		}
		stopProc(p, 10*time.Second)
	}
	killCgroupProcs()
	killShims(c.dir)
	if c.holder != nil && c.holder.Process != nil {
		_ = c.holder.Process.Kill()
		_ = c.holder.Wait()
	}
	if err := removeCgroupRoot(); err != nil {
		c.log("CLEAN-UP: cgroups: %v", err)
	}
	if c.host != nil {
		if err := c.host.Restore(); err != nil {
			c.log("CLEAN-UP: network: %v", err)
		}
	}
	for _, d := range c.madeDirs {
		if err := os.RemoveAll(d); err != nil {
			c.log("CLEAN-UP: %s: %v", d, err)
		}
	}
	if os.Getenv("E2E_KUBE_KEEP") == "" {
		if err := os.RemoveAll(c.dir); err != nil {
			c.log("CLEAN-UP: %s: %v", c.dir, err)
		}
	} else {
		c.log("state kept in %s", c.dir)
	}
}

// stopProc ends a process group with SIGTERM, then SIGKILL after grace.
func stopProc(p *exec.Cmd, grace time.Duration) {
	if p.Process == nil {
		return
	}
	done := make(chan struct{})
	go func() { _ = p.Wait(); close(done) }()
	_ = syscall.Kill(-p.Process.Pid, syscall.SIGTERM)
	select {
	case <-done:
	case <-time.After(grace):
		_ = syscall.Kill(-p.Process.Pid, syscall.SIGKILL)
		<-done
	}
}

// cgroupHierarchies are the mounted hierarchies the kubelet and runc make
// cgroups in: the v1 controllers and, on a hybrid machine, the unified one.
func cgroupHierarchies() []string {
	entries, err := os.ReadDir("/sys/fs/cgroup")
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		p := filepath.Join("/sys/fs/cgroup", e.Name())
		if fi, err := os.Lstat(p); err == nil && fi.IsDir() {
			if _, err := os.Stat(filepath.Join(p, "cgroup.procs")); err == nil {
				out = append(out, p)
			}
		}
	}
	return out
}

// makeCgroupRoot makes the kubelet's cgroup root in every v1 hierarchy;
// cpuset's needs its CPUs and memory nodes before anything can join it.
func makeCgroupRoot() error {
	for _, h := range cgroupHierarchies() {
		if strings.HasSuffix(h, "/unified") {
			continue // runc makes its paths there itself
		}
		dir := filepath.Join(h, cgroupRoot)
		if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
			return fmt.Errorf("cgroup %s: %w", dir, err)
		}
		for _, f := range []string{"cpuset.cpus", "cpuset.mems"} {
			if b, err := os.ReadFile(filepath.Join(h, f)); err == nil {
				if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
					return fmt.Errorf("%s: %w", f, err)
				}
			}
		}
	}
	return nil
}

// killCgroupProcs kills every process in the node's cgroups: what a shim
// that is killed first would leave running.
func killCgroupProcs() {
	for _, h := range cgroupHierarchies() {
		_ = filepath.WalkDir(filepath.Join(h, cgroupRoot), func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || d.Name() != "cgroup.procs" {
				return nil
			}
			b, _ := os.ReadFile(p)
			for _, f := range strings.Fields(string(b)) {
				if pid, err := strconv.Atoi(f); err == nil && pid > 1 {
					_ = syscall.Kill(pid, syscall.SIGKILL)
				}
			}
			return nil
		})
	}
}

// removeCgroupRoot removes the node's cgroups, deepest first, waiting a
// little for killed processes to leave them.
func removeCgroupRoot() error {
	var errs []error
	for _, h := range cgroupHierarchies() {
		root := filepath.Join(h, cgroupRoot)
		var dirs []string
		_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				dirs = append(dirs, p)
			}
			return nil
		})
		for i := len(dirs) - 1; i >= 0; i-- {
			var err error
			for try := 0; try < 50; try++ {
				if err = syscall.Rmdir(dirs[i]); err == nil || errors.Is(err, os.ErrNotExist) {
					err = nil
					break
				}
				time.Sleep(100 * time.Millisecond)
			}
			if err != nil {
				errs = append(errs, fmt.Errorf("rmdir %s: %w", dirs[i], err))
			}
		}
	}
	return errors.Join(errs...)
}

// killShims kills containerd's shims of the cluster whose state is in dir
// (or, with dir empty, of any earlier run): shims outlive containerd.
func killShims(dir string) {
	for _, pid := range pidsWithArg(func(arg string) bool {
		if dir != "" {
			return strings.HasPrefix(arg, dir+"/")
		}
		return strings.Contains(arg, "/"+stateDirPrefix)
	}) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}

// pidsWithArg lists the processes with an argument that match accepts.
func pidsWithArg(match func(string) bool) []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		if slices.ContainsFunc(strings.Split(string(b), "\x00"), match) {
			out = append(out, pid)
		}
	}
	return out
}

// sweepEarlierRuns ends what a run killed before its clean-up left: the
// processes that name an earlier state directory, the pods' processes in
// the node's cgroups, the cgroups and the bridge. Only this test's names
// are touched.
func sweepEarlierRuns(log func(string, ...any)) {
	pids := pidsWithArg(func(arg string) bool { return strings.Contains(arg, "/"+stateDirPrefix) })
	if len(pids) > 0 {
		log("ending %d processes an earlier run left", len(pids))
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		time.Sleep(500 * time.Millisecond)
	}
	killCgroupProcs()
	if err := removeCgroupRoot(); err != nil {
		log("earlier run's cgroups: %v", err)
	}
	if _, err := net.InterfaceByName(bridgeName); err == nil {
		_ = exec.Command("ip", "link", "del", bridgeName).Run()
	}
	old, _ := filepath.Glob(filepath.Join(os.TempDir(), stateDirPrefix+"*"))
	for _, d := range old {
		_ = os.RemoveAll(d)
	}
}

// checkSubnetFree fails when the machine already routes the pods' subnet.
func checkSubnetFree() error {
	_, pods, _ := net.ParseCIDR(podSubnet)
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return err
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && (pods.Contains(n.IP) || n.Contains(pods.IP)) {
			return fmt.Errorf("the pods' subnet %s overlaps %s on this machine", podSubnet, n)
		}
	}
	return nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b)
}

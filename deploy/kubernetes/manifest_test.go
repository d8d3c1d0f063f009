package kubernetes

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	kjson "k8s.io/apimachinery/pkg/util/json"
	"sigs.k8s.io/yaml"

	"github.com/actionserver/actionserver/internal/serverflags"
)

// serverDrain is the longest action-server takes to exit after SIGTERM (see
// shutdown in cmd/action-server/main.go). It lives in package main, which
// cannot be imported, hence the copy.
const serverDrain = 5 * time.Second

// objects are the decoded documents of the manifests, by kind.
type objects struct {
	deployments []appsv1.Deployment
	services    []corev1.Service
	secrets     []corev1.Secret
}

// documentSep splits multi-document YAML.
var documentSep = regexp.MustCompile(`(?m)^---[ \t]*$`)

// decode decodes every document of data strictly into its API type: an
// unknown, duplicate or wrongly cased field, or a kind this package does not
// know, is an error, since the API server would drop the field or reject the
// object.
func decode(data []byte, into *objects) error {
	for i, doc := range documentSep.Split(string(data), -1) {
		if isBlank(doc) {
			continue
		}
		var tm metav1.TypeMeta
		if err := yaml.Unmarshal([]byte(doc), &tm); err != nil {
			return fmt.Errorf("document %d: %w", i, err)
		}
		var err error
		switch tm.APIVersion + " " + tm.Kind {
		case "apps/v1 Deployment":
			var d appsv1.Deployment
			if d, err = decodeStrict[appsv1.Deployment](doc); err == nil {
				into.deployments = append(into.deployments, d)
			}
		case "v1 Service":
			var s corev1.Service
			if s, err = decodeStrict[corev1.Service](doc); err == nil {
				into.services = append(into.services, s)
			}
		case "v1 Secret":
			var s corev1.Secret
			if s, err = decodeStrict[corev1.Secret](doc); err == nil {
				into.secrets = append(into.secrets, s)
			}
		default:
			err = fmt.Errorf("unknown kind %q of apiVersion %q", tm.Kind, tm.APIVersion)
		}
		if err != nil {
			return fmt.Errorf("document %d: %w", i, err)
		}
	}
	return nil
}

// decodeStrict decodes one YAML document into T, failing on unknown and
// duplicate fields.
func decodeStrict[T any](doc string) (T, error) {
	var v, exact T
	if err := yaml.UnmarshalStrict([]byte(doc), &v); err != nil {
		return v, err
	}
	// UnmarshalStrict matches field names case-insensitively, as
	// encoding/json does, so "readinessprobe" passes; the API server matches
	// them exactly and drops such a field. Kubernetes' case-sensitive decoder
	// then gives a different object.
	j, err := yaml.YAMLToJSON([]byte(doc))
	if err != nil {
		return v, err
	}
	if err := kjson.Unmarshal(j, &exact); err != nil {
		return v, err
	}
	if !reflect.DeepEqual(v, exact) {
		return v, errors.New("a field name differs in case from the API's: the API server would drop it")
	}
	return v, nil
}

// isBlank reports whether a document holds only comments and blank lines.
func isBlank(doc string) bool {
	for line := range strings.Lines(doc) {
		if l := strings.TrimSpace(line); l != "" && !strings.HasPrefix(l, "#") {
			return false
		}
	}
	return true
}

// loadAll decodes every manifest of this folder.
func loadAll(t *testing.T) objects {
	t.Helper()
	paths, err := filepath.Glob("*.yaml")
	require.NoError(t, err)
	require.NotEmpty(t, paths)
	var objs objects
	for _, p := range paths {
		data, err := os.ReadFile(p)
		require.NoError(t, err)
		require.NoError(t, decode(data, &objs), p)
	}
	return objs
}

// server is the action-server container of the one Deployment and what its
// arguments mean to the server.
type server struct {
	deployment appsv1.Deployment
	container  corev1.Container
	cfg        serverflags.Config
}

// manifests are the sandbox variants: each holds one Deployment and its
// Service.
var manifests = []string{"action-server.yaml", "action-server-restricted.yaml", "action-server-pool.yaml"}

// lockedDown are the manifests under the restricted Pod Security Standard.
var lockedDown = []string{"action-server-restricted.yaml", "action-server-pool.yaml"}

// loadFile decodes one manifest.
func loadFile(t *testing.T, path string) objects {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var objs objects
	require.NoError(t, decode(data, &objs), path)
	return objs
}

// loadServer is the plain manifest's server.
func loadServer(t *testing.T) server { return loadServerFrom(t, manifests[0]) }

// eachServer runs f for the server of every manifest.
func eachServer(t *testing.T, f func(t *testing.T, s server)) {
	for _, m := range manifests {
		t.Run(m, func(t *testing.T) { f(t, loadServerFrom(t, m)) })
	}
}

func loadServerFrom(t *testing.T, path string) server {
	t.Helper()
	objs := loadFile(t, path)
	require.Len(t, objs.deployments, 1)
	d := objs.deployments[0]
	require.Len(t, d.Spec.Template.Spec.Containers, 1)
	c := d.Spec.Template.Spec.Containers[0]
	cfg, err := serverflags.Parse(c.Args)
	require.NoError(t, err, "container args %q", c.Args)
	return server{deployment: d, container: c, cfg: cfg}
}

// resolvePort returns the container port that p names or numbers, or 0.
func resolvePort(p intstr.IntOrString, ports []corev1.ContainerPort) int {
	for _, cp := range ports {
		if p.Type == intstr.String && p.StrVal == cp.Name || p.Type == intstr.Int && p.IntVal == cp.ContainerPort {
			return int(cp.ContainerPort)
		}
	}
	return 0
}

func TestDeployment_ArgsMatchServerFlags(t *testing.T) {
	s := loadServer(t)
	// A command would replace the image's ENTRYPOINT, the server binary.
	assert.Empty(t, s.container.Command)
	require.Len(t, s.container.Ports, 1)
	assert.Equal(t, s.cfg.Port, int(s.container.Ports[0].ContainerPort), "listen port vs containerPort")
	// The kubelet probes the pod's IP, not loopback.
	assert.Equal(t, "0.0.0.0", s.cfg.Host)
	assert.Equal(t, "/workspace", s.cfg.WorkDir)
	assert.Equal(t, "openhands", s.cfg.Username)
	assert.Equal(t, 1000, s.cfg.UserID)
}

func TestDeployment_ProbesHitTheOrchestratorRoutes(t *testing.T) {
	eachServer(t, probesHitTheOrchestratorRoutes)
}

// Liveness must never wait or turn 503 (a drain or a slow start would get
// the pod killed); readiness and start-up turn 503 until ready and while
// draining.
func probesHitTheOrchestratorRoutes(t *testing.T, s server) {
	probes := []struct {
		name     string
		probe    *corev1.Probe
		optional bool
		path     string
	}{
		{"readiness", s.container.ReadinessProbe, false, "/readyz"},
		{"liveness", s.container.LivenessProbe, false, "/livez"},
		{"startup", s.container.StartupProbe, true, "/readyz"},
	}
	for _, p := range probes {
		t.Run(p.name, func(t *testing.T) {
			if p.probe == nil && p.optional {
				t.Skip("not set")
			}
			require.NotNil(t, p.probe)
			require.NotNil(t, p.probe.HTTPGet, "probe must be httpGet")
			assert.Equal(t, p.path, p.probe.HTTPGet.Path)
			assert.Equal(t, s.cfg.Port, resolvePort(p.probe.HTTPGet.Port, s.container.Ports), "probe port %s", p.probe.HTTPGet.Port.String())
			assert.Contains(t, []corev1.URIScheme{"", corev1.URISchemeHTTP}, p.probe.HTTPGet.Scheme)
		})
	}
}

// readmeSecret finds the README's `kubectl create secret` line.
var readmeSecret = regexp.MustCompile(`kubectl create secret generic (\S+) --from-literal=([\w.-]+)=`)

func TestDeployment_APIKeyFromSecret(t *testing.T) { eachServer(t, apiKeyFromSecret) }

func apiKeyFromSecret(t *testing.T, s server) {
	var ref *corev1.SecretKeySelector
	for _, e := range s.container.Env {
		switch e.Name {
		case "SESSION_API_KEY":
			assert.Empty(t, e.Value, "the key must not be written in the manifest")
			if e.ValueFrom != nil {
				ref = e.ValueFrom.SecretKeyRef
			}
		case "INIT_TOKEN", "INIT_TOKEN_FILE":
			// A warm pool's pods get their key when claimed; the init
			// token that guards the claim comes from a Secret instead.
			ref = initTokenFromSecret(t, s, e)
		}
	}
	require.NotNil(t, ref, "SESSION_API_KEY (or a warm pool's init token) must come from a Secret")
	// An optional ref to a missing Secret starts the server without a key,
	// open to anyone who reaches the pod.
	assert.False(t, ref.Optional != nil && *ref.Optional, "secretKeyRef must not be optional")

	// The Secret is shipped as a manifest or created as the README says.
	provided := map[string]bool{}
	for _, sec := range loadAll(t).secrets {
		for k := range sec.Data {
			provided[sec.Name+"/"+k] = true
		}
		for k := range sec.StringData {
			provided[sec.Name+"/"+k] = true
		}
	}
	readme, err := os.ReadFile("README.md")
	require.NoError(t, err)
	for _, m := range readmeSecret.FindAllSubmatch(readme, -1) {
		provided[string(m[1])+"/"+string(m[2])] = true
	}
	assert.True(t, provided[ref.Name+"/"+ref.Key], "no Secret %q with key %q in the manifests or README.md (have %v)", ref.Name, ref.Key, provided)
}

// initTokenFromSecret checks that a pool's init token is a file of a
// Secret volume (so it never enters the server's environment) and
// returns that Secret's key.
func initTokenFromSecret(t *testing.T, s server, e corev1.EnvVar) *corev1.SecretKeySelector {
	t.Helper()
	require.Equal(t, "INIT_TOKEN_FILE", e.Name, "the init token is read from a file, not the environment")
	for _, m := range s.container.VolumeMounts {
		rel, err := filepath.Rel(m.MountPath, e.Value)
		if err != nil || strings.HasPrefix(rel, "..") {
			continue
		}
		assert.True(t, m.ReadOnly, "the init token's volume is read-only")
		for _, v := range s.deployment.Spec.Template.Spec.Volumes {
			if v.Name == m.Name && v.Secret != nil {
				assert.False(t, v.Secret.Optional != nil && *v.Secret.Optional, "the init token's Secret must not be optional")
				return &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: v.Secret.SecretName}, Key: rel}
			}
		}
	}
	t.Fatalf("INIT_TOKEN_FILE %s is not in a Secret volume", e.Value)
	return nil
}

func TestDeployment_GracePeriodExceedsDrain(t *testing.T) { eachServer(t, gracePeriodExceedsDrain) }

func gracePeriodExceedsDrain(t *testing.T, s server) {
	grace := s.deployment.Spec.Template.Spec.TerminationGracePeriodSeconds
	require.NotNil(t, grace)
	assert.Greater(t, time.Duration(*grace)*time.Second, serverDrain)
}

func TestDeployment_ResourceRequests(t *testing.T) { eachServer(t, resourceRequests) }

func resourceRequests(t *testing.T, s server) {
	res := s.container.Resources
	for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		q, ok := res.Requests[name]
		if assert.True(t, ok, "no %s request", name) {
			assert.Positive(t, q.Sign(), "%s request", name)
		}
		// The API server rejects a limit below the request.
		if limit, ok := res.Limits[name]; ok {
			assert.GreaterOrEqual(t, limit.Cmp(res.Requests[name]), 0, "%s limit below request", name)
		}
	}
}

func TestService_TargetsServerPort(t *testing.T) {
	for _, m := range manifests {
		t.Run(m, func(t *testing.T) { serviceTargetsServerPort(t, loadServerFrom(t, m), loadFile(t, m).services) })
	}
}

func serviceTargetsServerPort(t *testing.T, s server, services []corev1.Service) {
	podLabels := s.deployment.Spec.Template.Labels
	sel, err := metav1.LabelSelectorAsSelector(s.deployment.Spec.Selector)
	require.NoError(t, err)
	assert.True(t, sel.Matches(labels.Set(podLabels)), "deployment selector does not match its pods")
	require.NotEmpty(t, services)
	for _, svc := range services {
		require.NotEmpty(t, svc.Spec.Selector, svc.Name)
		for k, v := range svc.Spec.Selector {
			assert.Equal(t, v, podLabels[k], "service %s selector %s", svc.Name, k)
		}
		for _, p := range svc.Spec.Ports {
			target := p.TargetPort
			if target == (intstr.IntOrString{}) {
				target = intstr.FromInt32(p.Port) // the API's default
			}
			assert.Equal(t, s.cfg.Port, resolvePort(target, s.container.Ports), "service %s port %s", svc.Name, p.Name)
		}
	}
}

func TestDecode_IsStrict(t *testing.T) {
	orig, err := os.ReadFile("action-server.yaml")
	require.NoError(t, err)
	require.NoError(t, decode(orig, &objects{}), "the unmodified manifest must decode")
	cases := []struct {
		name, old, new string
	}{
		{"unknown field", "readinessProbe:", "readinessProbes:"},
		{"wrong case", "readinessProbe:", "readinessprobe:"},
		{"misspelt nested field", "failureThreshold: 75", "failureTreshold: 75"},
		{"duplicate field", "replicas: 1", "replicas: 1\n  replicas: 2"},
		{"wrong type", "terminationGracePeriodSeconds: 10", "terminationGracePeriodSeconds: ten"},
		{"unknown kind", "kind: Service", "kind: Servce"},
		{"unknown apiVersion", "apiVersion: apps/v1", "apiVersion: apps/v1beta9"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			broken := bytes.Replace(orig, []byte(tc.old), []byte(tc.new), 1)
			require.NotEqual(t, orig, broken, "%q not in the manifest", tc.old)
			assert.Error(t, decode(broken, &objects{}))
		})
	}
}

// A Secret is not shipped (README.md creates it), but one added to this
// folder must be decoded as strictly and seen by the API-key check.
func TestDecode_Secret(t *testing.T) {
	const secret = "apiVersion: v1\nkind: Secret\nmetadata:\n  name: action-server\nstringData:\n  session-api-key: x\n"
	var objs objects
	require.NoError(t, decode([]byte(secret), &objs))
	require.Len(t, objs.secrets, 1)
	assert.Contains(t, objs.secrets[0].StringData, "session-api-key")
	assert.Error(t, decode([]byte(strings.Replace(secret, "stringData", "stringdata", 1)), &objects{}))
}

// The restricted Pod Security Standard, field by field
// (kubernetes.io/docs/concepts/security/pod-security-standards), and what
// the server then needs: a writable workspace and /tmp on a read-only root.
func TestRestricted_MeetsThePodSecurityStandard(t *testing.T) {
	for _, m := range lockedDown {
		t.Run(m, func(t *testing.T) { meetsThePodSecurityStandard(t, loadServerFrom(t, m)) })
	}
}

func meetsThePodSecurityStandard(t *testing.T, s server) {
	pod := s.deployment.Spec.Template.Spec
	c := s.container
	require.NotNil(t, pod.SecurityContext)
	require.NotNil(t, c.SecurityContext)
	psc, csc := pod.SecurityContext, c.SecurityContext

	runAsNonRoot := psc.RunAsNonRoot != nil && *psc.RunAsNonRoot || csc.RunAsNonRoot != nil && *csc.RunAsNonRoot
	assert.True(t, runAsNonRoot, "runAsNonRoot")
	for _, uid := range []*int64{psc.RunAsUser, csc.RunAsUser} {
		assert.False(t, uid != nil && *uid == 0, "runAsUser must not be 0")
	}
	assert.True(t, csc.AllowPrivilegeEscalation != nil && !*csc.AllowPrivilegeEscalation, "allowPrivilegeEscalation: false")
	assert.False(t, csc.Privileged != nil && *csc.Privileged, "not privileged")
	require.NotNil(t, csc.Capabilities, "capabilities")
	assert.Contains(t, csc.Capabilities.Drop, corev1.Capability("ALL"))
	assert.Empty(t, csc.Capabilities.Add, "no capability added back")
	seccomp := csc.SeccompProfile
	if seccomp == nil {
		seccomp = psc.SeccompProfile
	}
	require.NotNil(t, seccomp, "seccompProfile")
	assert.Contains(t, []corev1.SeccompProfileType{corev1.SeccompProfileTypeRuntimeDefault, corev1.SeccompProfileTypeLocalhost}, seccomp.Type)
	assert.False(t, pod.HostNetwork || pod.HostPID || pod.HostIPC, "no host namespaces")
	for _, v := range pod.Volumes {
		assert.Nil(t, v.HostPath, "volume %s: no hostPath", v.Name)
	}

	// What the server needs there: it starts as the pod's uid, so no
	// sandbox user to switch to, and the places it writes are volumes.
	assert.Empty(t, s.cfg.Username, "no --username: the server cannot switch users")
	assert.True(t, csc.ReadOnlyRootFilesystem != nil && *csc.ReadOnlyRootFilesystem, "readOnlyRootFilesystem")
	mounted := map[string]bool{}
	for _, m := range c.VolumeMounts {
		mounted[m.MountPath] = !m.ReadOnly
	}
	for _, dir := range []string{s.cfg.WorkDir, "/tmp"} {
		assert.True(t, mounted[dir], "%s is writable (a volume)", dir)
	}
}

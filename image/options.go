package image

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	actionserver "github.com/actionserver/actionserver"
)

// Options say what runtime image to make. The zero value is not usable:
// BaseImage, Version and Binary are required; New fills in the rest.
type Options struct {
	// BaseImage is the image to build on, e.g. "debian:bookworm" or
	// "python:3.12-slim". It must be of the Debian/Ubuntu family (apt).
	BaseImage string
	// Repo is where the tags go, e.g. "localhost/action-server-runtime".
	Repo string
	// Version is the server's version; every tag starts with it.
	Version string
	// Binary is the path of the static action-server to bake in.
	Binary string
	// Browser installs Chromium for browse actions; without it the image's
	// default command passes --no-enable-browser.
	Browser bool
	// Plugins are the plugins to install and start: jupyter, agent_skills,
	// vscode (agent_skills needs jupyter).
	Plugins []string
	// NoAgentTools leaves out the tools agents expect in a sandbox
	// (AgentTools); the image then has only what the features need.
	NoAgentTools bool
	// ExtraDeps is a shell command run as root after the packages are in,
	// e.g. "apt-get install -y nodejs".
	ExtraDeps string
	// User and UID are the sandbox user the image creates (with
	// passwordless sudo) and the default command runs the shell as.
	User string
	UID  int
	// Platform, when set, is passed to the builder ("linux/arm64").
	Platform string
	// Template is the Dockerfile template; empty means the embedded
	// Dockerfile.tmpl.
	Template string
}

// DefaultRepo is the repository tags go to unless Options.Repo says
// otherwise. Fully qualified, so buildah never tries a registry for it.
const DefaultRepo = "localhost/action-server-runtime"

// knownPlugins are the plugins an image can carry.
var knownPlugins = []string{"jupyter", "agent_skills", "vscode"}

var userName = regexp.MustCompile(`^[a-z_][a-z0-9_-]{0,31}$`)

func (o Options) template() string {
	if o.Template != "" {
		return o.Template
	}
	return actionserver.DockerfileTemplate
}

func (o Options) repo() string {
	if o.Repo != "" {
		return o.Repo
	}
	return DefaultRepo
}

func (o Options) user() string {
	if o.User != "" {
		return o.User
	}
	return "openhands"
}

func (o Options) uid() int {
	if o.UID != 0 || o.user() == "root" {
		return o.UID
	}
	return 1000
}

func (o Options) hasPlugin(name string) bool { return slices.Contains(o.Plugins, name) }

// validate reports the first thing that makes the options unusable,
// before anything is written or built.
func (o Options) validate() error {
	if o.BaseImage == "" {
		return errors.New("no base image")
	}
	if strings.ContainsAny(o.BaseImage, " \t\n\"'") {
		return fmt.Errorf("base image %q: not an image reference", o.BaseImage)
	}
	if err := checkFamily(o.BaseImage); err != nil {
		return err
	}
	if o.Version == "" {
		return errors.New("no version")
	}
	if !userName.MatchString(o.user()) {
		return fmt.Errorf("user %q: not a valid user name", o.user())
	}
	if o.uid() < 0 || (o.uid() == 0) != (o.user() == "root") {
		return fmt.Errorf("user %s with uid %d: only root has uid 0", o.user(), o.uid())
	}
	for _, p := range o.Plugins {
		if !slices.Contains(knownPlugins, p) {
			return fmt.Errorf("Plugin %s not found (known: %s)", p, strings.Join(knownPlugins, ", "))
		}
	}
	if o.hasPlugin("agent_skills") && !o.hasPlugin("jupyter") {
		return errors.New("plugin agent_skills needs jupyter")
	}
	if strings.Contains(o.ExtraDeps, "\n") {
		return errors.New("extra deps: one line only (join commands with &&)")
	}
	return nil
}

// nonApt lists image names of distributions without apt. The family cannot
// be read from a reference without pulling the image, so this catches the
// common cases at render time; the Dockerfile checks for apt-get again
// before using it, so any other base fails early in the build with the
// same message.
var nonApt = regexp.MustCompile(`(^|[/_.-])(alpine|fedora|centos|rockylinux|almalinux|rhel\d*|ubi\d*(-minimal|-micro)?|amazonlinux|archlinux|opensuse|sles|busybox|photon|oraclelinux|clearlinux|wolfi|distroless|gentoo|nixos|void)([/_.:@-]|$)`)

// checkFamily refuses base images known not to be Debian/Ubuntu-family.
func checkFamily(ref string) error {
	name := strings.ToLower(ref)
	if name == "scratch" || nonApt.MatchString(name) {
		return fmt.Errorf("base image %s is not of the Debian/Ubuntu family: the runtime image installs its packages with apt", ref)
	}
	return nil
}

// packages are the Debian packages the options need, besides the base
// system's, sorted.
func (o Options) packages() []string {
	var p []string
	if o.hasPlugin("jupyter") {
		// pip: `%pip install` in the kernel and `pip install` in the
		// shell, as in upstream's image.
		p = append(p, "python3", "jupyter-server", "python3-ipykernel", "python3-pip")
	}
	if !o.NoAgentTools {
		p = append(p, AgentTools...)
	}
	if o.Browser {
		// libjs-pdf: the file viewer serves its pdf.js, so that PDFs show
		// without internet.
		p = append(p, "chromium", "fonts-liberation", "libjs-pdf")
	}
	slices.Sort(p)
	return slices.Compact(p)
}

// AgentTools are the Debian packages of what agents reach for in a sandbox
// and OpenHands' own runtime image gives them: python (python-is-python3),
// rg (ripgrep), curl, ps and pkill (procps), and a C toolchain with make
// (build-essential) for packages that compile on install.
var AgentTools = []string{"build-essential", "curl", "procps", "python-is-python3", "ripgrep"}

// basePackages are installed whatever the features: the shell, sudo for
// the sandbox user, git for agents, certificates for HTTPS.
var basePackages = []string{"bash", "ca-certificates", "git", "sudo"}

// serverArgs is the default command of the image: the server's flags for
// these options, as OpenHands passes them.
func (o Options) serverArgs() []string {
	args := []string{"8000", "--working-dir", "/workspace", "--username", o.user(), "--user-id", strconv.Itoa(o.uid())}
	if len(o.Plugins) > 0 {
		args = append(args, "--plugins")
		args = append(args, o.Plugins...)
	}
	if !o.Browser {
		args = append(args, "--no-enable-browser")
	}
	return args
}

// canonical is one line that changes whenever an option that shapes the
// image's layers changes (the binary aside).
func (o Options) canonical() string {
	plugins := slices.Clone(o.Plugins)
	slices.Sort(plugins)
	return fmt.Sprintf("browser=%t plugins=%s user=%s uid=%d platform=%s packages=%s extra=%q",
		o.Browser, strings.Join(plugins, ","), o.user(), o.uid(), o.Platform, strings.Join(o.packages(), ","), o.ExtraDeps)
}

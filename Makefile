# action-server: see README.md. Every target works on a fresh Debian machine with Go.
SHELL := /bin/bash
GO    ?= go
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X main.version=$(VERSION)
# nomsgpack: gin's MessagePack binding, which the API never uses, is 6 of the
# binary's 20 MB and a fifth of its start-up (package initialisation).
TAGS  := nomsgpack
BUILD := CGO_ENABLED=0 $(GO) build -tags '$(TAGS)' -trimpath -ldflags '$(LDFLAGS)'

PORT ?= 8000

.PHONY: all build run test lint deps bench fuzz soak clean compat

all: build

build:
	$(BUILD) -o bin/action-server ./cmd/action-server
	$(BUILD) -o bin/actionctl ./cmd/actionctl

# Standalone: this machine's user, the current directory as workspace, loopback only.
run: build
	./bin/action-server --host 127.0.0.1 --port $(PORT) --working-dir "$(CURDIR)" --generate-key

deps:
	./scripts/deps.sh

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [[ -n "$$out" ]]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

test: deps build lint
	$(GO) test -race -count=1 -timeout 30m $$($(GO) list ./... | grep -v -e /e2e/container -e /e2e/kube)
	$(MAKE) --no-print-directory e2e-container
	FUZZTIME=1000x scripts/fuzz.sh
	scripts/vuln.sh
	$(MAKE) --no-print-directory compat
	$(MAKE) --no-print-directory sdk-test

# The runtime image under a real engine: podman (installed and built by
# scripts/container-deps.sh), a base image made locally, the image built by
# actionctl build, its behaviour inside the container, actionctl up/down,
# the locked-down form and the unmodified OpenHands DockerRuntime. Needs
# root; E2E_CONTAINER=skip skips it. See e2e/container.
.PHONY: e2e-container
e2e-container:
	$(GO) test -count=1 -timeout 40m ./e2e/container/

# The runtime image on a real one-node Kubernetes cluster started here
# (etcd, the control plane, containerd, a kubelet; Kubernetes built once
# from the Go module proxy by scripts/kube-deps.sh, 8-10 minutes cold):
# the restricted and warm-pool manifests, the Go client at the pod IP,
# claims and key rotation, a pod deleted during a stream, /metrics. Needs
# root; not part of `make test`. See e2e/kube.
.PHONY: e2e-kube
e2e-kube:
	E2E_KUBE=1 $(GO) test -count=1 -timeout 60m -v ./e2e/kube/

# The unmodified OpenHands host (pinned openhands-ai releases, in a local
# virtual environment) drives bin/action-server through its own classes,
# as root and as a uid-1000 sandbox user. COMPAT_VERSIONS, COMPAT_USERS and
# COMPAT_PYTEST narrow it (compat/openhands/README.md). Then swe-rex's own
# client and mini-swe-agent drive it started as swerex-remote (compat/swerex).
compat: build
	compat/openhands/run.sh
	compat/swerex/run.sh

# The Python SDK (python/) against bin/action-server: pytest in python/.venv
# with the pinned requirements-dev.txt, installed once (python/test.sh).
.PHONY: sdk-test
sdk-test: build
	python/test.sh

# govulncheck at a pinned version, against the live database or the newest
# snapshot in ../shared/data; warns and passes only when neither is there.
.PHONY: vuln
vuln:
	scripts/vuln.sh

# Concurrent clients mixing every kind of action; fails on a wrong answer
# or a leak. SOAK_DURATION=2h for a long run.
SOAK_DURATION ?= 2m
soak:
	$(GO) run ./bench/cmd/soak -duration $(SOAK_DURATION)

# Explore every fuzz target for FUZZTIME each (default 60s).
fuzz:
	scripts/fuzz.sh

# The upstream Python server is measured beside ours from the compat
# suite's environment; without Python 3.12+ that row says it was not measured.
bench: build
	-compat/openhands/setup.sh 0.62.0 >/dev/null
	-compat/swerex/setup.sh >/dev/null
	$(GO) test -run '^$$' -bench . -benchtime 20x ./shell ./files ./server
	$(GO) run ./bench/cmd/report

clean:
	rm -rf bin

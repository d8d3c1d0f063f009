#!/usr/bin/env bash
# Installs what the one-node cluster of `make e2e-kube` needs and prints, as
# shell assignments, where it all is (eval "$(scripts/kube-deps.sh)"):
#
#   KUBE_BIN        kube-apiserver, kube-controller-manager, kube-scheduler,
#                   kubelet, kube-proxy and kubectl, Kubernetes 1.32.4 built
#                   once from the Go module proxy
#   KUBE_ETCD       etcd from Debian's etcd-server package
#   KUBE_CONTAINERD a directory with containerd, its runc shim and ctr, from
#                   Debian's containerd package
#   KUBE_CNI        the CNI plugins (bridge, host-local, loopback, portmap)
#   KUBE_COREDNS    CoreDNS 1.12.1, built once from the Go module
#                   proxy: the cluster DNS OpenHands' KubernetesRuntime needs
#
# etcd and containerd are unpacked, not installed: Debian's etcd-server
# package starts an etcd on the machine's port 2379 when it is installed,
# and the cluster must leave nothing running. Idempotent: when everything is
# present it returns within a second. Everything comes from Debian's archive
# and the Go module proxy.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/.." && pwd)"
deps="${KUBE_DEPS_DIR:-$root/.deps/kube}"

kube_version=1.32.4
# Kubernetes publishes each staging module as v0.<minor>.<patch>.
staging_version=v0.32.4
etcd_deb=3.4.23-4+b4
containerd_deb=1.6.20~ds1-1+deb12u3
coredns_version=1.12.1

if [[ $(id -u) -ne 0 ]]; then
	SUDO=sudo
else
	SUDO=
fi
log() { echo "kube-deps: $*" >&2; }

# ---- Debian packages that start nothing ------------------------------------
pkgs=(containernetworking-plugins catatonit runc iptables podman)
"$here/apt-install.sh" --tag kube-deps "${pkgs[@]}"

mkdir -p "$deps"

# ---- etcd and containerd, unpacked ------------------------------------------
# unpack PACKAGE VERSION DIR: the package's files under DIR, once.
unpack() {
	local pkg=$1 version=$2 dir=$3
	[[ -f $dir/.unpacked && "$(cat "$dir/.unpacked")" == "$pkg=$version" ]] && return 0
	log "unpacking $pkg $version"
	local work
	work="$(mktemp -d)"
	(cd "$work" && apt-get -o DPkg::Lock::Timeout=900 download -qq "$pkg=$version" 2>/dev/null) || {
		$SUDO apt-get -o DPkg::Lock::Timeout=900 update -qq
		(cd "$work" && apt-get download -qq "$pkg=$version")
	}
	rm -rf "$dir"
	mkdir -p "$dir"
	dpkg-deb -x "$work"/*.deb "$dir"
	rm -rf "$work"
	echo "$pkg=$version" >"$dir/.unpacked"
}
unpack etcd-server "$etcd_deb" "$deps/etcd"
unpack containerd "$containerd_deb" "$deps/containerd"

# ---- Kubernetes from the Go module proxy ------------------------------------
# `go install k8s.io/kubernetes/cmd/...@v` is refused: its go.mod replaces
# every staging module with a directory. A throwaway module requires it and
# replaces them with their published versions instead. The version ldflags
# are what `kubectl version` and the kubelet's registration parse.
bin="$deps/kubernetes-$kube_version"
cmds=(kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy kubectl)
have=1
for c in "${cmds[@]}"; do [[ -x $bin/$c ]] || have=0; done
if ((!have)); then
	log "building Kubernetes $kube_version (8-10 minutes cold on 2 cores)"
	work="$(mktemp -d)"
	trap 'rm -rf "$work"' EXIT
	staging=$(curl -fsS "$(go env GOPROXY | cut -d, -f1)/k8s.io/kubernetes/@v/v$kube_version.mod" |
		sed -n 's#^[[:space:]]*\(k8s.io/[a-z0-9-]*\) => ./staging/.*#\1#p')
	[[ -n $staging ]] || {
		log "cannot read k8s.io/kubernetes v$kube_version's go.mod"
		exit 1
	}
	pkgver=k8s.io/component-base/version
	ldflags="-s -w -X $pkgver.gitVersion=v$kube_version -X $pkgver.gitMajor=${kube_version%%.*}"
	minor=${kube_version#*.}
	ldflags+=" -X $pkgver.gitMinor=${minor%%.*} -X $pkgver.gitTreeState=clean"
	if ! (
		cd "$work"
		go mod init kube-build
		for m in $staging; do
			go mod edit -replace "$m=$m@$staging_version"
		done
		GOFLAGS=-mod=mod go get "k8s.io/kubernetes@v$kube_version"
		mkdir -p out
		for c in "${cmds[@]}"; do
			CGO_ENABLED=0 GOFLAGS=-mod=mod go build -trimpath -ldflags "$ldflags" \
				-o "out/$c" "k8s.io/kubernetes/cmd/$c"
		done
	) >"$work/build.log" 2>&1; then
		tail -30 "$work/build.log" >&2
		log "building Kubernetes $kube_version failed"
		exit 1
	fi
	mkdir -p "$bin"
	for c in "${cmds[@]}"; do
		mv "$work/out/$c" "$bin/$c.tmp" && mv "$bin/$c.tmp" "$bin/$c"
	done
fi

# ---- CoreDNS from the Go module proxy -----------------------------------------
# Its module has no replace directives, so `go install` builds it.
coredns="$deps/coredns-$coredns_version/coredns"
if [[ ! -x $coredns ]]; then
	log "building CoreDNS $coredns_version (a few minutes cold)"
	if ! CGO_ENABLED=0 GOBIN="$(dirname "$coredns")" go install -trimpath -ldflags '-s -w' \
		"github.com/coredns/coredns@v$coredns_version" >"$deps/coredns-build.log" 2>&1; then
		tail -30 "$deps/coredns-build.log" >&2
		log "building CoreDNS $coredns_version failed"
		exit 1
	fi
fi

printf 'KUBE_BIN=%q\nKUBE_ETCD=%q\nKUBE_CONTAINERD=%q\nKUBE_CNI=%q\nKUBE_COREDNS=%q\n' \
	"$bin" "$deps/etcd/usr/bin/etcd" "$deps/containerd/usr/bin" /usr/lib/cni "$coredns"

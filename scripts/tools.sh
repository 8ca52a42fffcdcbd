#!/usr/bin/env bash
# Builds the test infrastructure and reference tools from the Go module proxy, once, cached under
# ~/.cache/olmpub/tools/<tool>-<version>/bin. Nothing here is downloaded as a release binary.
#
#   scripts/tools.sh build TOOL...   build (if not cached) and print nothing but progress on stderr
#   scripts/tools.sh path TOOL       print the directory holding TOOL's binaries (builds it first)
#   scripts/tools.sh list            the tools and their pinned versions
#
# TOOL: k8s (kube-apiserver, kube-controller-manager, kube-scheduler, kubectl), etcd, kwok,
#       helm, opm, oras, crane, olm (catalogd and operator-controller, the latter with its alpha
#       Boxcutter runtime stubbed out, see build_olm)
set -euo pipefail

K8S_VERSION=${K8S_VERSION:-v1.36.3}
ETCD_VERSION=v3.6.14
KWOK_VERSION=v0.8.0
HELM_VERSION=v3.21.4
OPM_VERSION=v1.73.0
ORAS_VERSION=v1.3.3
CRANE_VERSION=v0.21.9
OLM_VERSION=v1.11.0

CACHE=${OLMPUB_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/olmpub/tools}
BOXCUTTER_STUB=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/olm-boxcutter-stub
export GOFLAGS=-mod=mod GOTOOLCHAIN=local
log() { printf '[tools] %s\n' "$*" >&2; }

version_of() {
  case $1 in
    k8s) echo "$K8S_VERSION" ;; etcd) echo "$ETCD_VERSION" ;; kwok) echo "$KWOK_VERSION" ;;
    helm) echo "$HELM_VERSION" ;; opm) echo "$OPM_VERSION" ;; oras) echo "$ORAS_VERSION" ;;
    crane) echo "$CRANE_VERSION" ;; olm) echo "$OLM_VERSION" ;;
    *) echo "unknown tool '$1' (known: k8s etcd kwok helm opm oras crane olm)" >&2; exit 2 ;;
  esac
}
# The olm build also depends on the boxcutter stub, so its cache directory carries a hash of the stub:
# editing the stub rebuilds operator-controller.
stub_hash() { (cd "$BOXCUTTER_STUB" && find . -type f \( -name '*.go' -o -name go.mod \) | LC_ALL=C sort | xargs sha256sum | sha256sum | cut -c1-10); }
dir_of() {
  if [ "$1" = olm ]; then echo "$CACHE/olm-$OLM_VERSION-bc$(stub_hash)"; else echo "$CACHE/$1-$(version_of "$1")"; fi
}

# A throwaway main module that pins the tool's module, so `go build` works even when the tool's own
# go.mod has replace directives (kubernetes, etcd).
wrapper() { # dir go-version
  mkdir -p "$1/src" "$1/bin"; cd "$1/src"
  [ -f go.mod ] || go mod init testinfra.local/wrapper >/dev/null 2>&1
  go mod edit -go="$2"
}

build_k8s() {
  local d=$1 st="v0.${K8S_VERSION#v1.}" minor; minor=$(echo "$K8S_VERSION" | cut -d. -f2)
  wrapper "$d" 1.26.0; go mod edit -godebug=default=go1.26
  local gomod; gomod=$(go mod download -json "k8s.io/kubernetes@$K8S_VERSION" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
  for m in $(awk '$2=="v0.0.0"{print $1}' "$gomod" | grep '^k8s.io/' | sort -u); do go mod edit -replace="$m=$m@$st"; done
  go mod edit -require="k8s.io/kubernetes@$K8S_VERSION"
  local ldf="-s -w" p
  for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ldf+=" -X $p.gitVersion=$K8S_VERSION -X $p.gitMajor=1 -X $p.gitMinor=$minor -X $p.gitTreeState=clean -X $p.buildDate=2026-01-01T00:00:00Z"
  done
  cat > tools.go <<'GO'
//go:build tools

package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver/app"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager/app"
	_ "k8s.io/kubernetes/cmd/kube-scheduler/app"
	_ "k8s.io/kubectl/pkg/cmd"
)
GO
  go mod tidy >/dev/null 2>&1 || true
  CGO_ENABLED=0 go build -trimpath -pgo=off -ldflags "$ldf" -o "$d/bin/" \
    k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager \
    k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kubectl
}

build_etcd() {
  wrapper "$1" 1.25.0
  go get "go.etcd.io/etcd/server/v3@$ETCD_VERSION"
  CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$1/bin/etcd" go.etcd.io/etcd/server/v3
}

# Like `go install pkg@version`, but through a wrapper module: `go install` also asks the proxy for the
# module's version list (deprecation check), which this proxy refuses for some modules.
goinstall() { # dir module version pkg [go build flags...]
  local d=$1 mod=$2 ver=$3 pkg=$4; shift 4
  wrapper "$d" 1.26.0
  go mod edit -require="$mod@$ver" -tool="$pkg"
  go mod download "$mod@$ver"
  go build -trimpath -ldflags "-s -w" "$@" -o "$d/bin/" "$pkg"
}

build_kwok() { goinstall "$1" sigs.k8s.io/kwok "$KWOK_VERSION" sigs.k8s.io/kwok/cmd/kwok; }
build_helm() { goinstall "$1" helm.sh/helm/v3 "$HELM_VERSION" helm.sh/helm/v3/cmd/helm; }
build_opm() { CGO_ENABLED=1 goinstall "$1" github.com/operator-framework/operator-registry "$OPM_VERSION" github.com/operator-framework/operator-registry/cmd/opm -tags json1,containers_image_openpgp; }
build_oras() { goinstall "$1" oras.land/oras "$ORAS_VERSION" oras.land/oras/cmd/oras; }
build_crane() { goinstall "$1" github.com/google/go-containerregistry "$CRANE_VERSION" github.com/google/go-containerregistry/cmd/crane; }
# catalogd and operator-controller. operator-controller v1.11.0 (and v1.10.0, the only other version
# served) imports pkg.package-operator.run/boxcutter for its alpha, default-off BoxcutterRuntime, and the
# proxy here refuses that module host (403), so the build replaces it with scripts/olm-boxcutter-stub: the
# identifiers operator-controller compiles against, a no-op tracking cache for the default Helm runtime
# (no drift detection), and errors for everything Boxcutter would do. Never enable BoxcutterRuntime.
# crdify's pinned pseudo-version is missing from the checksum database, hence GONOSUMDB.
build_olm() {
  local m=github.com/operator-framework/operator-controller
  wrapper "$1" 1.26.3
  go mod edit -require="$m@$OLM_VERSION" -tool="$m/cmd/catalogd" -tool="$m/cmd/operator-controller" \
    -replace="pkg.package-operator.run/boxcutter=$BOXCUTTER_STUB"
  go mod download "$m@$OLM_VERSION"
  GONOSUMDB=sigs.k8s.io/crdify CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -tags containers_image_openpgp -o "$1/bin/" \
    "$m/cmd/catalogd" "$m/cmd/operator-controller"
}

ensure() {
  local t=$1 d; d=$(dir_of "$t")
  [ -f "$d/.done" ] && return 0
  # One build per tool at a time, even across concurrent callers (tests, CI, developers).
  exec {lock}>"$CACHE/$t.lock"; flock "$lock"
  [ -f "$d/.done" ] && { flock -u "$lock"; return 0; }
  log "building $t $(version_of "$t") into $d (first time only)"
  local start=$SECONDS
  ( "build_$t" "$d" ) >"$CACHE/$t.build.log" 2>&1 || { log "building $t failed; last lines of $CACHE/$t.build.log:"; tail -n 30 "$CACHE/$t.build.log" >&2; exit 3; }
  touch "$d/.done"
  flock -u "$lock"
  log "built $t in $((SECONDS - start)) s"
}

mkdir -p "$CACHE"
case ${1:-} in
  build) shift; for t in "$@"; do version_of "$t" >/dev/null; ensure "$t"; done ;;
  path) version_of "$2" >/dev/null; ensure "$2"; echo "$(dir_of "$2")/bin" ;;
  list) for t in k8s etcd kwok helm opm oras crane olm; do printf '%-6s %s\n' "$t" "$(version_of "$t")"; done ;;
  *) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; [ "${1:-}" = "-h" ] || [ "${1:-}" = "--help" ] || exit 2 ;;
esac

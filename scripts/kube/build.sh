#!/usr/bin/env bash
# Builds the real Kubernetes binaries the test harness runs (kube-apiserver, kube-controller-manager,
# kube-scheduler, kubelet, kubectl), etcd, and the project's two Go test helpers (a CRI runtime on
# upstream's fake runtime, a DRA driver on upstream's kubeletplugin library) from Go modules, into a
# cache directory outside the repository keyed by version. What is already there is reused.
#
#   scripts/kube/build.sh [kubernetes-version]       default v1.36.3 (or $DEVHEALTH_KUBE_VERSION)
#
# Environment: DEVHEALTH_KUBE_CACHE (default ~/.cache/devhealth/kube), DEVHEALTH_ETCD_VERSION
# (default v3.6.16). Prints the binaries' directory as its last line.
#
# Why a generated module: k8s.io/kubernetes requires its staging modules (k8s.io/api, client-go, ...)
# at v0.0.0 with replace directives into ./staging, so `go install k8s.io/kubernetes/cmd/...@version`
# is refused. A main module of our own that requires k8s.io/kubernetes and replaces every staging
# module with its published v0.<minor>.<patch> tag resolves the same dependency graph the release uses.
set -euo pipefail

version="${1:-${DEVHEALTH_KUBE_VERSION:-v1.36.3}}"
etcd_version="${DEVHEALTH_ETCD_VERSION:-v3.6.16}"
cache="${DEVHEALTH_KUBE_CACHE:-$HOME/.cache/devhealth/kube}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

[[ "$version" =~ ^v1\.([0-9]+)\.([0-9]+)$ ]] || { echo "kube-build: version must look like v1.36.3, got '$version'" >&2; exit 2; }
minor="${BASH_REMATCH[1]}"
staging_version="v0.${minor}.${BASH_REMATCH[2]}"
command -v go >/dev/null || { echo "kube-build: go is not installed (Go >= 1.26 builds Kubernetes $version)" >&2; exit 3; }

root="$cache/$version"
bin="$root/bin"
mkdir -p "$bin"
exec 9>"$root/.lock"
flock 9   # two test JVMs (or a test and a person) never build the same cache at once

start=$(date +%s)
log() { echo "kube-build: [$(( $(date +%s) - start ))s] $*" >&2; }
# GOFLAGS=-mod=mod: the generated modules have no go.sum until go get writes it.
export CGO_ENABLED=0 GOFLAGS=-mod=mod
upstream=(kube-apiserver kube-controller-manager kube-scheduler kubelet kubectl)

# --- upstream Kubernetes -------------------------------------------------------------------------
if [ -f "$bin/.kubernetes-complete" ]; then
  log "kubernetes $version: cached in $bin"
else
  mod="$root/module"
  mkdir -p "$mod"
  log "kubernetes $version: resolving modules in $mod"
  kmod="$(cd "$mod" && go mod download -json "k8s.io/kubernetes@$version" | sed -n 's/^\t"GoMod": "\(.*\)",$/\1/p')"
  [ -f "$kmod" ] || { echo "kube-build: could not download k8s.io/kubernetes@$version" >&2; exit 4; }
  {
    echo "module devhealth.test/kube"
    echo
    grep -E '^(go|godebug) ' "$kmod"
    echo
    echo "require k8s.io/kubernetes $version"
    echo
    echo "replace ("
    sed -n 's#^\t\(k8s\.io/[a-z0-9-]*\) => \./staging/src/.*#\t\1 => \1 '"$staging_version"'#p' "$kmod"
    echo ")"
  } > "$mod/go.mod"
  # A throwaway package that imports nothing: go needs one package in the main module to resolve.
  mkdir -p "$mod/pin" && echo 'package pin' > "$mod/pin/pin.go"
  pkgs=()
  for b in "${upstream[@]}"; do pkgs+=("k8s.io/kubernetes/cmd/$b"); done
  # @version on every package: a bare package path would mean @upgrade, the newest release.
  getpkgs=(); for p in "${pkgs[@]}"; do getpkgs+=("$p@$version"); done
  (cd "$mod" && go get "${getpkgs[@]}" >/dev/null 2>"$root/go-get.log") || { cat "$root/go-get.log" >&2; exit 4; }
  # The version the binaries report (kubectl version, the node's kubeletVersion, /version).
  ldflags="-s -w"
  for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ldflags+=" -X $p.gitVersion=$version -X $p.gitMajor=1 -X $p.gitMinor=$minor -X $p.gitTreeState=clean -X $p.buildDate=1970-01-01T00:00:00Z"
  done
  log "kubernetes $version: building ${upstream[*]} (a cold build takes tens of minutes on 2 cores)"
  # GNU time reports the build's peak memory; without it the build runs all the same.
  timer=(); [ -x /usr/bin/time ] && timer=(/usr/bin/time -v)
  (cd "$mod" && "${timer[@]}" go build -trimpath -ldflags "$ldflags" -o "$bin/" "${pkgs[@]}" 2>"$root/build.log") \
    || { tail -50 "$root/build.log" >&2; exit 5; }
  peak=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$root/build.log")
  touch "$bin/.kubernetes-complete"
  log "kubernetes $version: built${peak:+ (peak RSS of the go command $(( peak / 1024 )) MiB)}"
fi

# --- etcd ------------------------------------------------------------------------------------------
if [ -x "$bin/etcd" ] && [ -f "$bin/.etcd-$etcd_version" ]; then
  log "etcd $etcd_version: cached"
else
  emod="$root/etcd-module"
  mkdir -p "$emod/pin" && echo 'package pin' > "$emod/pin/pin.go"
  printf 'module devhealth.test/etcd\n\ngo 1.26.0\n\nrequire go.etcd.io/etcd/server/v3 %s\n' "$etcd_version" > "$emod/go.mod"
  log "etcd $etcd_version: building"
  (cd "$emod" && go get "go.etcd.io/etcd/server/v3@$etcd_version" >/dev/null 2>&1 \
     && go build -trimpath -ldflags "-s -w" -o "$bin/etcd" go.etcd.io/etcd/server/v3 2>"$root/etcd-build.log") \
    || { tail -50 "$root/etcd-build.log" >&2; exit 6; }
  rm -f "$bin"/.etcd-* && touch "$bin/.etcd-$etcd_version"
  log "etcd $etcd_version: built"
fi

# --- the project's Go test helpers, keyed by their source --------------------------------------------
src="$here/helpers"
sum="$(cd "$src" && find . -type f -name '*.go' | sort | xargs sha256sum | sha256sum | cut -c1-16)"
if [ -x "$bin/devhealth-fake-cri" ] && [ -f "$bin/.helpers-$sum" ]; then
  log "helpers: cached ($sum)"
else
  mod="$root/module"
  # From 1.37 the kubeletplugin library serves DRAResourceHealth itself (WatchHealthStatus).
  helper_tags=""; [ "$minor" -ge 37 ] && helper_tags=kube137
  rm -rf "$mod/helpers" && cp -r "$src" "$mod/helpers"
  log "helpers: building ($sum)"
  (cd "$mod" && go mod tidy >/dev/null 2>"$root/helpers-tidy.log" || { cat "$root/helpers-tidy.log" >&2; exit 7; }
   go build -trimpath -tags "$helper_tags" -o "$bin/" ./helpers/... 2>"$root/helpers-build.log") || { cat "$root/helpers-build.log" >&2; exit 7; }
  rm -f "$bin"/.helpers-* && touch "$bin/.helpers-$sum"
  log "helpers: built"
fi

log "done"
echo "$bin"

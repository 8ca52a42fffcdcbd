#!/usr/bin/env bash
# The whole test suite, or some tiers of it, from a fresh clone:
#   scripts/test.sh                 unit + integration + e2e
#   scripts/test.sh unit            pure logic only: no cluster, no registry
#   scripts/test.sh integration     real kube-apiserver, real registries, real reference tools
#   scripts/test.sh e2e             installs and upgrades through real OLM v1
# Installs what it needs (npm packages; Debian packages when run as root), builds the reference tools
# from the Go module proxy (cached in ~/.cache/olmpub), starts the test environment if it is not
# running, and stops it again if it started it. Extra arguments after `--` go to mocha.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
tiers=(); mocha_args=()
while [ $# -gt 0 ]; do
  case $1 in
    unit|integration|e2e) tiers+=("$1") ;;
    --) shift; mocha_args=("$@"); break ;;
    *) echo "test.sh: unknown tier '$1' (unit, integration, e2e)" >&2; exit 2 ;;
  esac
  shift
done
[ ${#tiers[@]} -gt 0 ] || tiers=(unit integration e2e)

[ -d node_modules ] || npm ci --no-audit --no-fund
npx tsc -p tsconfig.json && mkdir -p dist && touch dist/.built

needs_env=false
for t in "${tiers[@]}"; do [ "$t" = unit ] || needs_env=true; done
if $needs_env; then
  if ! command -v docker-registry >/dev/null || ! command -v htpasswd >/dev/null; then
    if [ "$(id -u)" = 0 ]; then
      (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq docker-registry apache2-utils) >/dev/null
    else
      echo "test.sh: install docker-registry and apache2-utils (Debian packages) first" >&2; exit 3
    fi
  fi
  # Build every reference tool up front, so no single test waits minutes for a first build.
  scripts/tools.sh build k8s etcd kwok helm opm oras crane olm
  if ! scripts/testenv status >/dev/null 2>&1; then
    scripts/testenv up
    trap 'scripts/testenv down' EXIT
  fi
  for t in "${tiers[@]}"; do [ "$t" != e2e ] || scripts/testenv olm; done
fi

specs=()
for t in "${tiers[@]}"; do specs+=(--spec "dist/test/$t/**/*.test.js"); done
npx mocha "${specs[@]}" "${mocha_args[@]}"

#!/usr/bin/env bash
# olmpub against the reference tools (opm, helm, crane, oras built from the Go module proxy), measured in
# the same run: a table of wall time (median of N runs) and peak RSS per tool, with the ratio olmpub/peer.
#
#   scripts/bench.sh                    5 runs each: an 1800-bundle catalog, a 3 × 20 MiB image (4-5 min on 2 busy cores)
#   scripts/bench.sh --quick            1 run each, no warm-up, a 300-bundle catalog
#   scripts/bench.sh --runs 9 --packages 200 --only validate,graph
#   scripts/bench.sh --help             every option (bench/main.ts)
#
# Builds (tsc), builds the reference tools when missing (scripts/tools.sh, cached), and pushes to the
# registry of the default test environment when `scripts/testenv status` says it runs. Otherwise it uses a
# dedicated environment, TESTENV_NAME=bench: started here if it is not running, and then stopped again at
# the end. An environment this script did not start is never stopped. --registry HOST:PORT pushes to that
# registry instead; --no-registry (or --only without push) needs none. Generated data lives in a temp
# directory and is removed at the end. Benchmarks print numbers; nothing asserts a timing.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

need_registry=true
args=("$@")
for ((i = 0; i < ${#args[@]}; i++)); do
  case ${args[i]} in
    --no-registry | --registry | --registry=* | -h | --help) need_registry=false ;;
    --only=*) [[ ${args[i]#--only=} == *push* ]] || need_registry=false ;;
    --only) [[ ${args[i + 1]:-} == *push* ]] || need_registry=false ;;
  esac
done

[ -d node_modules ] || npm ci --no-audit --no-fund
npx tsc -p tsconfig.json

if [ ! -x /usr/bin/time ]; then
  if [ "$(id -u)" = 0 ]; then
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq time) >/dev/null
  else
    echo "bench.sh: /usr/bin/time (GNU time) measures peak RSS: install the Debian package 'time' first" >&2; exit 3
  fi
fi
scripts/tools.sh build opm helm crane oras

registry_args=()
if $need_registry; then
  if scripts/testenv status >/dev/null 2>&1; then
    registry_args=(--registry "$(scripts/testenv env REGISTRY)")
  else
    if ! TESTENV_NAME=bench scripts/testenv status >/dev/null 2>&1; then
      echo "bench.sh: the default test environment is not running; starting a dedicated one (TESTENV_NAME=bench)" >&2
      TESTENV_NAME=bench scripts/testenv up
      trap 'TESTENV_NAME=bench scripts/testenv down' EXIT
    fi
    registry_args=(--registry "$(TESTENV_NAME=bench scripts/testenv env REGISTRY)")
  fi
fi

node dist/bench/main.js "${registry_args[@]}" "$@"

#!/usr/bin/env bash
# Finality at 50 ms RTT in network namespaces (internal/netns, 10.250.0.0/24,
# 1% loss): Cowboy with 4 and 7 validators beside CometBFT 0.38 (kvstore,
# 4 validators) in the same topology and the same run. Needs root; as
# another user it says so and exits 0. Installs CometBFT with `go install`
# unless a 0.38 binary is already at $COMETBFT, on PATH or in $GOPATH/bin.
#   scripts/bench-netns.sh        (also run by scripts/bench.sh, make bench)
set -euo pipefail
cd "$(dirname "$0")/.."
COMETBFT_VERSION=v0.38.26

if [ "$(id -u)" != 0 ]; then
  echo "bench-netns: skipped (network namespaces need root)"
  exit 0
fi

is038() { [ -x "$1" ] && "$1" version 2>/dev/null | grep -q '^0\.38\.'; }
bin="${COMETBFT:-}"
if [ -z "$bin" ] || ! is038 "$bin"; then
  bin=""
  for c in "$(command -v cometbft || true)" "$(go env GOPATH)/bin/cometbft"; do
    if [ -n "$c" ] && is038 "$c"; then bin="$c"; break; fi
  done
fi
if [ -z "$bin" ]; then
  echo "bench-netns: installing cometbft $COMETBFT_VERSION"
  go install "github.com/cometbft/cometbft/cmd/cometbft@$COMETBFT_VERSION"
  bin="$(go env GOPATH)/bin/cometbft"
fi
echo "bench-netns: cometbft $("$bin" version) at $bin"

COWBOY_NETNS_BENCH=1 COMETBFT="$bin" go test -run '^TestNetnsBenchFinality$' -count=1 -v -timeout 20m ./e2e/ 2>&1 |
  grep -E "^(NETNS-BENCH|--- |ok|FAIL|PASS)|netns_bench_test"

#!/usr/bin/env bash
# Chain under load (issue 14): the same load generator (bin/cowboy-loadgen:
# pre-signed transfers over HTTP, 64 workers spread over the nodes) against
# a 4-validator `cowboy testnet` (1 s blocks) and against 4 CometBFT 0.38
# nodes running the built-in kvstore app, in the same run. Points: low-load
# latency, then closed-loop saturation S measured again right before each
# of 1x, 2x and 4x S open loop (each Nx scales by, and is compared with,
# the S just before it: the chain's commit cost per transaction grows as
# the sweep grows the chain, so a single S from the start of the run
# overstates what later points can reach; docs/BENCHMARKS.md, issue 14).
# Prints one table per chain; docs/BENCHMARKS.md records the ratios.
#   CHAIN_BENCH_DURATION  seconds per point (default 5)
#   CHAIN_BENCH_POINTS    default lat,sat,1x,sat,2x,sat,4x
#   CHAIN_BENCH_SKIP_COMET=1  Cowboy only
#   CHAIN_BENCH_SKIP_SWEEP=1  no in-process sweep first
#   CHAIN_BENCH_SKIP_COWBOY=1 CometBFT only
# For Cowboy the generator also samples each node's /metrics every 250 ms
# during a point (executable and gapped transactions in its pool,
# admission refusals by code and source) and logs them per node with what
# it offered through that node; CHAIN_BENCH_JSON=FILE keeps every point's
# full result as JSON lines.
set -euo pipefail
cd "$(dirname "$0")/.."

COMETBFT_VERSION=v0.38.26
DUR="${CHAIN_BENCH_DURATION:-5}s"
POINTS="${CHAIN_BENCH_POINTS:-lat,sat,1x,sat,2x,sat,4x}"
WORK="$(mktemp -d /tmp/cowboy-chain-bench.XXXXXX)"
COMET_PIDS=()

cleanup() {
  [ -f "$WORK/cowboy/testnet.json" ] && bin/cowboy testnet down --dir "$WORK/cowboy" >/dev/null 2>&1 || true
  for p in "${COMET_PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${COMET_PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
  [ -n "${CHAIN_BENCH_KEEP:-}" ] || rm -rf "$WORK"
}
trap cleanup EXIT

go build -o bin/ ./cmd/cowboy ./cmd/cowboyd ./cmd/cowboy-loadgen

# The same sweep in one process first (chain/node BenchmarkNetwork4Overload:
# 4 validators on loopback, 1 s blocks, sat then 1x/2x/4x S, CPU per
# transfer); its ratios hold on a loaded machine better than the
# multi-process run below, which needs a quiet one.
if [ "${CHAIN_BENCH_SKIP_SWEEP:-}" != 1 ]; then
echo "== in-process sweep ($(date -u +%H:%M:%S) UTC, load $(cut -d' ' -f1-3 /proc/loadavg))"
CHAIN_BENCH_SWEEP=1 CHAIN_BENCH_DURATION="${CHAIN_BENCH_DURATION:-5}" \
  go test ./chain/node -run XXX -bench Network4Overload -benchtime 1x -v 2>&1 |
  grep -E "Benchmark|overload_bench"
fi

bench_cowboy() {
  echo "== Cowboy: 4 validators, 1 s blocks, transfers ($(date -u +%H:%M:%S) UTC)"
  bin/cowboy testnet init --dir "$WORK/cowboy" --validators 4 --rpc-port 18645 --p2p-port 18656 >/dev/null
  bin/cowboy testnet up --dir "$WORK/cowboy" --no-pvm --log-level "${CHAIN_BENCH_LOG:-warn}" >/dev/null
  bin/cowboy-loadgen --target cowboy --workers 64 --duration "$DUR" --points "$POINTS" ${CHAIN_BENCH_JSON:+--json-out "$CHAIN_BENCH_JSON"} \
    --nodes http://127.0.0.1:18645,http://127.0.0.1:18646,http://127.0.0.1:18647,http://127.0.0.1:18648
  bin/cowboy testnet down --dir "$WORK/cowboy" >/dev/null
}

cometbft_bin() {
  local gobin
  gobin="$(go env GOPATH)/bin"
  if ! "$gobin/cometbft" version 2>/dev/null | grep -q "^${COMETBFT_VERSION#v}"; then
    echo "installing cometbft $COMETBFT_VERSION" >&2
    go install "github.com/cometbft/cometbft/cmd/cometbft@$COMETBFT_VERSION" >&2
  fi
  echo "$gobin/cometbft"
}

bench_comet() {
  local cmt dir urls="" peers="" i id
  cmt="$(cometbft_bin)"
  dir="$WORK/comet"
  echo "== CometBFT $COMETBFT_VERSION kvstore: 4 validators, default timeouts ($(date -u +%H:%M:%S) UTC)"
  "$cmt" testnet --v 4 --o "$dir" --starting-ip-address 127.0.0.1 >/dev/null
  for i in 0 1 2 3; do
    id="$("$cmt" show-node-id --home "$dir/node$i")"
    peers="${peers:+$peers,}$id@127.0.0.1:$((18756 + 10 * i))"
    urls="${urls:+$urls,}http://127.0.0.1:$((18757 + 10 * i))"
  done
  for i in 0 1 2 3; do
    sed -i \
      -e "s#^proxy_app = .*#proxy_app = \"kvstore\"#" \
      -e "/^\[rpc\]/,/^\[/ s#^laddr = .*#laddr = \"tcp://127.0.0.1:$((18757 + 10 * i))\"#" \
      -e "/^\[p2p\]/,/^\[/ s#^laddr = .*#laddr = \"tcp://127.0.0.1:$((18756 + 10 * i))\"#" \
      -e "s#^persistent_peers = .*#persistent_peers = \"$peers\"#" \
      -e "s#^allow_duplicate_ip = .*#allow_duplicate_ip = true#" \
      -e "s#^addr_book_strict = .*#addr_book_strict = false#" \
      -e "s#^log_level = .*#log_level = \"error\"#" \
      "$dir/node$i/config/config.toml"
    "$cmt" start --home "$dir/node$i" >"$dir/node$i.log" 2>&1 &
    COMET_PIDS+=($!)
  done
  # Every node answers and the chain has committed a few blocks.
  local ok=""
  for _ in $(seq 1 150); do
    ok=1
    for i in 0 1 2 3; do
      curl -sf "http://127.0.0.1:$((18757 + 10 * i))/status" | grep -q '"latest_block_height": *"\([3-9]\|[1-9][0-9]\)' || ok=""
    done
    [ -n "$ok" ] && break
    sleep 0.2
  done
  if [ -z "$ok" ]; then
    echo "CometBFT did not start; node logs:" >&2
    tail -n 20 "$dir"/node*.log | grep -v "Error dialing peer" >&2
    return 1
  fi
  bin/cowboy-loadgen --target cometbft --workers 64 --duration "$DUR" --points "$POINTS" --nodes "$urls" \
    ${CHAIN_BENCH_JSON:+--json-out "$CHAIN_BENCH_JSON"}
  for p in "${COMET_PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${COMET_PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
  COMET_PIDS=()
}

echo "chain load benchmark: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
[ "${CHAIN_BENCH_SKIP_COWBOY:-}" = 1 ] || bench_cowboy
[ "${CHAIN_BENCH_SKIP_COMET:-}" = 1 ] || bench_comet

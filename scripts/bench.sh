#!/usr/bin/env bash
# Runs every Go benchmark in the repository with a small fixed iteration
# count and prints the raw lines. docs/BENCHMARKS.md records the figures as
# ratios against baselines measured in the same run; the per-package
# BENCH.txt files say how each was produced. Long runs are opt-in:
#   CBFS_BIG=1          1 GiB put/get through 6 relays (relay/)
#   CBFS_FUSE_BENCH=1   fio against a mounted volume (fuse/)
#   COWBOY_SOAK=1       5,000-seed consensus soak (make soak)
# Then, as root, scripts/bench_fs.sh compares a CBFS mount with a local
# directory, gocryptfs and rclone crypt (SKIP_PEER_BENCH=1 skips it).
set -euo pipefail
cd "$(dirname "$0")/.."
go test -run XXX -bench . -benchtime "${BENCHTIME:-3x}" -timeout 60m ./... 2>&1 |
  grep -E "^(Benchmark|goos|goarch|cpu|pkg|ok|PASS|FAIL|---)"
if [ -z "${SKIP_PEER_BENCH:-}" ] && [ "$(id -u)" = 0 ]; then
  ./scripts/bench_fs.sh
fi

# The chain under load against CometBFT kvstore, same run (scripts/bench-chain.sh).
./scripts/bench-chain.sh
# Finality at 50 ms RTT in network namespaces, beside CometBFT (root only).
./scripts/bench-netns.sh

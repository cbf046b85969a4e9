#!/usr/bin/env bash
# Runs the Go benchmarks and prints their raw output; docs/BENCHMARKS.md
# records the figures (as ratios against baselines measured in the same run).
set -euo pipefail
cd "$(dirname "$0")/.."
go test -run XXX -bench . -benchtime 3x ./chain/... ./e2e/... 2>&1 | grep -E '^(Benchmark|goos|goarch|cpu|pkg|ok|PASS|FAIL)' 

#!/usr/bin/env bash
# The main job, end to end on one machine with embedded defaults:
# start a devnet, create two keys, fund one from the faucet, transfer to the
# other, print receipts and balances, and stop cleanly.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=$PWD/bin

WORK=$(mktemp -d -t cowboy-demo.XXXXXX)
PORT=${COWBOY_DEMO_PORT:-$(python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])')}
NODE_PID=""
cleanup() {
  if [ -n "$NODE_PID" ] && kill -0 "$NODE_PID" 2>/dev/null; then
    kill -TERM "$NODE_PID"; wait "$NODE_PID" 2>/dev/null || true
  fi
  rm -rf "$WORK"
}
trap cleanup EXIT

export COWBOY_NODE=http://127.0.0.1:$PORT COWBOY_HOME=$WORK/cli COWBOY_PASSWORD=demo
step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

step "Starting a single-validator devnet (cowboyd --dev) on 127.0.0.1:$PORT"
"$BIN/cowboyd" --dev --home "$WORK/node" --rpc "127.0.0.1:$PORT" --log-level warn 2>"$WORK/node.log" &
NODE_PID=$!
for _ in $(seq 1 100); do
  "$BIN/cowboy" status >/dev/null 2>&1 && break
  kill -0 "$NODE_PID" 2>/dev/null || { cat "$WORK/node.log"; exit 1; }
  sleep 0.1
done
"$BIN/cowboy" status

step "Creating keys alice and bob"
"$BIN/cowboy" keys new alice --light-kdf
"$BIN/cowboy" keys new bob --light-kdf

step "Funding alice with 1000 CBY from the faucet"
"$BIN/cowboy" faucet alice --value 1000

step "alice sends 250.5 CBY to bob"
"$BIN/cowboy" tx transfer --from alice --to bob --value 250.5

step "Balances"
"$BIN/cowboy" account show alice
"$BIN/cowboy" account show bob

step "Transfer events so far"
"$BIN/cowboy" events --topic transfer

step "Chain status"
"$BIN/cowboy" status

step "Stopping the node"
kill -TERM "$NODE_PID"; wait "$NODE_PID"; NODE_PID=""
echo "Node stopped cleanly."

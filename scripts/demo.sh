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

step "Deploying the counter actor (examples/counter/counter.py) and calling it"
C=$("$BIN/cowboy" actor deploy --from alice --code examples/counter/counter.py --salt counter-1 | tee /dev/stderr | awk '/Actor deployed/ {print $3}')
"$BIN/cowboy" actor call --from alice "$C" increment --payload '[5]'
"$BIN/cowboy" actor call --from alice "$C" increment
printf 'query get -> '; "$BIN/cowboy" actor query "$C" get

step "Ping-pong: two actors rally over messages within one block"
A=$("$BIN/cowboy" actor deploy --from alice --code examples/pingpong/player.py --salt player-a | awk '/Actor deployed/ {print $3}')
B=$("$BIN/cowboy" actor deploy --from alice --code examples/pingpong/player.py --salt player-b | awk '/Actor deployed/ {print $3}')
"$BIN/cowboy" actor call --from alice "$A" serve --payload "[\"$B\", 4]"

step "Account-scoped libraries (seed 000 §4): alice publishes engine v1 and deploys three game actors"
"$BIN/cowboy" lib publish --from alice --name engine --code examples/library/engine.py
WORLDS=()
for w in world-1 world-2 world-3; do
  W=$("$BIN/cowboy" actor deploy --from alice --code examples/library/world_actor.py --salt "$w" --init-handler init --init-payload '{}' | tee /dev/stderr | awk '/Actor deployed/ {print $3}')
  WORLDS+=("$W")
done

step "alice publishes engine v2: existing actors stay pinned to v1, a new deploy gets v2"
"$BIN/cowboy" lib publish --from alice --name engine --code examples/library/engine_v2.py
printf '%s version -> ' "${WORLDS[0]}"; "$BIN/cowboy" actor query "${WORLDS[0]}" version
W4=$("$BIN/cowboy" actor deploy --from alice --code examples/library/world_actor.py --salt world-4 --init-handler init --init-payload '{}' | awk '/Actor deployed/ {print $3}')
printf '%s version -> ' "$W4"; "$BIN/cowboy" actor query "$W4" version
"$BIN/cowboy" actor pins "${WORLDS[0]}"
"$BIN/cowboy" lib list alice

step "bob tries to deploy the same actor: engine is not published under his account"
"$BIN/cowboy" faucet bob --value 10 >/dev/null
if "$BIN/cowboy" actor deploy --from bob --code examples/library/world_actor.py --salt world-1 --init-handler init --init-payload '{}'; then
  echo "unexpected: bob's deploy succeeded" >&2; exit 1
fi

step "alice removes engine: pinned actors keep working"
"$BIN/cowboy" lib remove --from alice --name engine
printf '%s score(3) -> ' "${WORLDS[1]}"; "$BIN/cowboy" actor query "${WORLDS[1]}" score --payload '[3]'

step "Chain status"
"$BIN/cowboy" status

step "Stopping the node"
kill -TERM "$NODE_PID"; wait "$NODE_PID"; NODE_PID=""
echo "Node stopped cleanly."

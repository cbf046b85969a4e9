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
RELAY_PIDS=()
RELAY_IDS=()
EXTRA_PIDS=() # runners and their local services (scripts/demo_runners.sh)
cleanup() {
  for p in "${EXTRA_PIDS[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${EXTRA_PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
  for p in "${RELAY_PIDS[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${RELAY_PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
  if [ -n "$NODE_PID" ] && kill -0 "$NODE_PID" 2>/dev/null; then
    kill -TERM "$NODE_PID"; wait "$NODE_PID" 2>/dev/null || true
  fi
  rm -rf "$WORK"
}
trap cleanup EXIT

export COWBOY_NODE=http://127.0.0.1:$PORT COWBOY_HOME=$WORK/cli COWBOY_PASSWORD=demo
step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

step "Starting a single-validator devnet (cowboyd --dev) on 127.0.0.1:$PORT"
"$BIN/cowboyd" --dev --home "$WORK/node" --rpc "127.0.0.1:$PORT" --block-interval 250ms --log-level warn 2>"$WORK/node.log" &
NODE_PID=$!
for _ in $(seq 1 100); do
  "$BIN/cowboy" status >/dev/null 2>&1 && break
  kill -0 "$NODE_PID" 2>/dev/null || { cat "$WORK/node.log"; exit 1; }
  sleep 0.1
done
"$BIN/cowboy" status
echo "Explorer         $COWBOY_NODE/explorer/  (open it now to watch the demo live)"

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

step "CIP-20 platform token: alice creates CUSD and sends bob 12.5 (the module's cost table, not metered Python)"
T=$("$BIN/cowboy" token create --from alice --name "Cowboy Dollar" --symbol CUSD --decimals 6 --cap 1000000 --supply 1000 | tee /dev/stderr | awk '/^Token / {print $2}')
"$BIN/cowboy" token transfer --from alice "$T" bob 12.5 | awk '/used/'
printf 'bob holds '; "$BIN/cowboy" token balance "$T" bob
"$BIN/cowboy" token info "$T"

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

step "Timers: a heartbeat every 2 blocks, bid for by a Gas Bidding Agent"
G=$("$BIN/cowboy" actor deploy --from alice --code examples/timers/gba.py --salt gba-1 | awk '/Actor deployed/ {print $3}')
HB=$("$BIN/cowboy" actor deploy --from alice --code examples/timers/heartbeat.py --manifest examples/timers/heartbeat.manifest.json --salt hb-1 --value 1 --init-payload "{\"every\": 2, \"gba\": \"$G\"}" | awk '/Actor deployed/ {print $3}')
"$BIN/cowboy" actor call --from alice "$HB" start
"$BIN/cowboy" timer list "$HB"
sleep 3
printf 'status -> '; "$BIN/cowboy" actor query "$HB" status
"$BIN/cowboy" events --emitter 0x0000000000000000000000000000000000000010 --topic TimerFired --limit 5
"$BIN/cowboy" timer stats
"$BIN/cowboy" actor call --from alice "$HB" stop

start_relay() { # $1 = index; starts a relay process registered on chain
  local home="$WORK/relay$1"
  "$BIN/cowboy-relay" init --home "$home" --listen 127.0.0.1:0 >/dev/null
  local id
  id=$("$BIN/cowboy-relay" status --home "$home" --json | python3 -c 'import json,sys;print(json.load(sys.stdin)["id"])')
  "$BIN/cowboy" faucet "$id" --value 200 >/dev/null
  "$BIN/cowboy-relay" run --home "$home" --node "$COWBOY_NODE" --stake 100 --heartbeat 1s --log-level warn 2>"$home.log" &
  RELAY_PIDS[$1]=$!
  RELAY_IDS[$1]=$id
}
wait_relays() { # $1 = expected healthy relays
  for _ in $(seq 1 200); do
    [ "$("$BIN/cowboy" relay list --json | python3 -c 'import json,sys;print(sum(1 for r in json.load(sys.stdin) if r["healthy"]))')" = "$1" ] && return 0
    sleep 0.25
  done
  echo "relays did not reach $1 healthy" >&2; "$BIN/cowboy" relay list >&2; return 1
}

step "CBFS: starting 6 relay nodes (QUIC on loopback), each staking 100 CBY in the Relay Registry"
for i in 1 2 3 4 5 6; do start_relay "$i"; done
wait_relays 6
"$BIN/cowboy" relay list

step "alice creates a 4+2 volume and stores a 12 MiB file (AES-256-GCM, Reed-Solomon, manifest root anchored on chain)"
"$BIN/cowboy" volume create demo --from alice --k 4 --m 2
head -c $((12 * 1024 * 1024)) /dev/urandom > "$WORK/dataset.bin"
"$BIN/cowboy" volume put demo "$WORK/dataset.bin" datasets/dataset.bin --from alice
"$BIN/cowboy" volume info demo --from alice

step "alice funds the rent escrow; each storage epoch (20 blocks) the Storage Manager challenges every relay, which answers automatically (leaf + chunk Merkle proofs) and then claims its rent"
"$BIN/cowboy" volume fund demo 1 --from alice
for _ in $(seq 1 160); do
  "$BIN/cowboy" relay list --json | python3 -c 'import json,sys; rs=json.load(sys.stdin); sys.exit(0 if len(rs)==6 and all(r["challenges"]["earned"]!="0" for r in rs) else 1)' && break
  sleep 0.25
done
"$BIN/cowboy" volume info demo --from alice | sed -n '/^Placement/,$p'
"$BIN/cowboy" relay status "${RELAY_IDS[3]}" | sed -n '/^Challenges/,$p'

step "Killing two relays (kill -9)"
kill -9 "${RELAY_PIDS[1]}" "${RELAY_PIDS[2]}"; wait "${RELAY_PIDS[1]}" "${RELAY_PIDS[2]}" 2>/dev/null || true
RELAY_PIDS[1]=""; RELAY_PIDS[2]=""

step "Reading the file back from the 4 survivors: every shard verified, bytes intact"
"$BIN/cowboy" volume get demo datasets/dataset.bin "$WORK/back.bin" --from alice
cmp "$WORK/dataset.bin" "$WORK/back.bin" && echo "sha256 $(sha256sum < "$WORK/back.bin" | cut -c1-16)… matches the original"

step "The registry marks the dead relays unhealthy once their heartbeats stop"
wait_relays 4
"$BIN/cowboy" relay list

step "Two replacement relays join; repair rebuilds the lost shards onto them"
start_relay 7; start_relay 8
wait_relays 6
"$BIN/cowboy" volume repair demo --from alice
"$BIN/cowboy" volume info demo --from alice
"$BIN/cowboy" volume get demo datasets/dataset.bin "$WORK/back2.bin" --from alice
cmp "$WORK/dataset.bin" "$WORK/back2.bin" && echo "Full redundancy restored: 6 healthy shards per segment, file intact."

# Off-chain compute: 3 runners serve HTTP, LLM and MCP jobs for an agent actor.
source scripts/demo_runners.sh

# Governance: a parameter change proposed, voted, queued and in force.
source scripts/demo_governance.sh

# State rent: eviction and restore on a second devnet with rent on.
source scripts/demo_rent.sh

# Ethereum events: a geth --dev log relayed to an actor, and a wrapped-token mint.
source scripts/demo_ethbridge.sh

step "Chain status"
"$BIN/cowboy" status
echo "Explorer: $COWBOY_NODE/explorer/ (blocks, jobs, volumes, relays, runners; live while the devnet runs)"

# COWBOY_DEMO_HOLD=DIR keeps the devnet up after the scenario for the
# explorer's browser tests (e2e): the URL goes to DIR/node, and the demo
# goes on once DIR/done exists (at most 5 minutes).
if [ "${COWBOY_DEMO_KEEP:-}" = 1 ]; then
  echo "COWBOY_DEMO_KEEP=1: the devnet stays up for the explorer at $COWBOY_NODE/explorer/ — press Ctrl-C to stop."
  trap 'echo; echo "Stopping."' INT
  sleep infinity & wait $! || true
  trap - INT
elif [ -t 1 ]; then
  echo "(run with COWBOY_DEMO_KEEP=1 to keep the devnet and its explorer up after the demo)"
fi
if [ -n "${COWBOY_DEMO_HOLD:-}" ]; then
  echo "$COWBOY_NODE" > "$COWBOY_DEMO_HOLD/node.tmp" && mv "$COWBOY_DEMO_HOLD/node.tmp" "$COWBOY_DEMO_HOLD/node"
  for _ in $(seq 1 3000); do [ -e "$COWBOY_DEMO_HOLD/done" ] && break; sleep 0.1; done
fi

step "Stopping relays and the node"
for p in "${RELAY_PIDS[@]}"; do [ -n "$p" ] && kill -TERM "$p" 2>/dev/null; done
for p in "${RELAY_PIDS[@]}"; do [ -n "$p" ] && wait "$p" 2>/dev/null; done
RELAY_PIDS=()
kill -TERM "$NODE_PID"; wait "$NODE_PID"; NODE_PID=""
echo "Node stopped cleanly."

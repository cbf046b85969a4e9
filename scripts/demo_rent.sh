# State rent (docs/RENT.md), sourced by scripts/demo.sh (uses BIN, WORK,
# step and EXTRA_PIDS): a second devnet whose genesis turns rent on with
# 2-block rent epochs shows an actor archived while live, evicted for
# unpaid rent (overdue → warning → evicted) and restored from the CLI.
step "State rent: a second devnet with rent on and 2-block rent epochs"
RPORT=$(python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])')
RNODE=http://127.0.0.1:$RPORT
"$BIN/cowboyd" init --dev --home "$WORK/rentnode" >/dev/null
python3 - "$WORK/rentnode/genesis.json" <<'PY'
import json, sys
p = sys.argv[1]
g = json.load(open(p))
g["rent"] = {"epoch_blocks": 2, "rate_pico": 10**15, "target_bytes": 60000, "sweep_per_block": 8}
json.dump(g, open(p, "w"), indent=2)
PY
"$BIN/cowboyd" --dev --home "$WORK/rentnode" --rpc "127.0.0.1:$RPORT" --block-interval 50ms --log-level warn 2>"$WORK/rentnode.log" &
RENT_PID=$!
EXTRA_PIDS+=("$RENT_PID")
rc() { "$BIN/cowboy" --node "$RNODE" "$@"; }
for _ in $(seq 1 100); do
  rc status >/dev/null 2>&1 && break
  kill -0 "$RENT_PID" 2>/dev/null || { cat "$WORK/rentnode.log"; exit 1; }
  sleep 0.1
done
rc faucet alice --value 10 >/dev/null
rc faucet bob --value 10 >/dev/null
cat >"$WORK/hoard.py" <<'PY'
from cowboy_sdk import actor

@actor
class Hoard:
    def __init__(self):
        self.storage["n"] = 0

    def fill(self, n, size):
        for i in range(n):
            self.storage["k" + str(1000 + i)] = "x" * size
        self.storage["n"] = n

    def bump(self):
        self.storage["n"] = self.storage["n"] + 1
        return self.storage["n"]
PY
H=$(rc actor deploy --from alice --code "$WORK/hoard.py" --salt hoard | awk '/Actor deployed/ {print $3}')
echo "Actor $H stores 60 KB (50 KB above the free 10 KiB), bob sponsors 10 rent epochs"
rc actor call --from alice "$H" fill --payload '[60, 1000]' --cells 150000 | sed -n 1p
rc actor rent-sponsor --from bob "$H" --epochs 10 | sed -n 1p
rc actor rent "$H"

step "State rent: archive the live actor's storage (every slot proven), then let its rent run out"
rc actor archive "$H" --out "$WORK/hoard.archive"
last=""
for _ in $(seq 1 600); do
  s=$(rc actor rent "$H" --json | python3 -c 'import json,sys;print(["active","overdue","warning","evicted"][json.load(sys.stdin)["status"]])')
  [ "$s" != "$last" ] && echo "  seen at block $(rc status --json | python3 -c 'import json,sys;print(json.load(sys.stdin)["height"])'): $s" && last=$s
  [ "$s" = evicted ] && break
  sleep 0.1
done
rc actor rent "$H"
rc events --emitter 0x000000000000000000000000000000000000000f --topic ActorEvicted
echo "A call to the dormant actor fails:"
rc actor call --from alice "$H" bump 2>&1 | tail -1 || true

step "State rent: bob pays the debt (and prepays ahead), then restores the actor from the archive"
rc actor rent-pay --from bob "$H" --value 0.001 | sed -n 1p
rc actor restore --from bob "$H" --archive "$WORK/hoard.archive" --pay-debt
rc actor rent "$H"
rc actor call --from alice "$H" bump | sed -n 1p
kill -TERM "$RENT_PID"; wait "$RENT_PID" 2>/dev/null || true

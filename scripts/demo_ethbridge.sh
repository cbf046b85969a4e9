# Ethereum events (docs/ETHEREUM.md), sourced by scripts/demo.sh (uses BIN,
# WORK, step and EXTRA_PIDS): a real Ethereum chain (geth --dev, installed
# by make deps) runs a vault contract; a devnet whose genesis names the key
# "bridge" as the bridge set; a listener actor subscribed to the vault's
# Deposit event; cowboy-ethrelay relays a confirmed Deposit log to the
# actor's handler and mints the wrapped token to the depositor's recipient.
GETH=$PWD/bin/tools/geth
[ -x "$GETH" ] || GETH=$(command -v geth || true)
if [ -z "$GETH" ]; then
  step "Ethereum events: SKIPPED — geth is not installed (make deps installs bin/tools/geth)"
else
step "Ethereum events: geth --dev (one block a second) and the demo vault contract"
free_port() { python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])'; }
EPORT=$(free_port)
ETH=http://127.0.0.1:$EPORT
"$GETH" --dev --dev.period 1 --datadir "$WORK/geth" --http --http.addr 127.0.0.1 --http.port "$EPORT" --http.api eth,net,web3 \
  --ipcdisable --port 0 --authrpc.port 0 --nodiscover --maxpeers 0 --verbosity 2 2>"$WORK/geth.log" &
GETH_PID=$!
EXTRA_PIDS+=("$GETH_PID")
VAULT=$("$BIN/cowboy-ethrelay" vault deploy --eth "$ETH")
CHAIN=$(curl -s -X POST -H 'content-type: application/json' --data '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}' "$ETH" |
  python3 -c 'import json,sys;print(int(json.load(sys.stdin)["result"],16))')
VAULT_LC=$(echo "$VAULT" | tr 'A-F' 'a-f')
echo "Ethereum chain $CHAIN at $ETH; vault $VAULT emits Deposit(address indexed from, bytes32 indexed to, uint256 amount)"

step "Ethereum events: a devnet whose genesis makes the key 'bridge' the bridge set (threshold 1)"
"$BIN/cowboy" keys new bridge --light-kdf >/dev/null
BRIDGE_ADDR=$("$BIN/cowboy" keys list --json | python3 -c 'import json,sys;print([k["address"] for k in json.load(sys.stdin) if k["name"]=="bridge"][0])')
BOB_ADDR=$("$BIN/cowboy" keys list --json | python3 -c 'import json,sys;print([k["address"] for k in json.load(sys.stdin) if k["name"]=="bob"][0])')
BPORT=$(free_port)
BNODE=http://127.0.0.1:$BPORT
"$BIN/cowboyd" init --dev --home "$WORK/bridgenode" >/dev/null
python3 - "$WORK/bridgenode/genesis.json" "$BRIDGE_ADDR" <<'PY'
import json, sys
p = sys.argv[1]
g = json.load(open(p))
g["bridge"] = {"members": [sys.argv[2]], "threshold": 1}
json.dump(g, open(p, "w"), indent=2)
PY
"$BIN/cowboyd" --dev --home "$WORK/bridgenode" --rpc "127.0.0.1:$BPORT" --block-interval 100ms --log-level warn 2>"$WORK/bridgenode.log" &
BRIDGE_NODE_PID=$!
EXTRA_PIDS+=("$BRIDGE_NODE_PID")
bc() { "$BIN/cowboy" --node "$BNODE" "$@"; }
for _ in $(seq 1 100); do
  bc status >/dev/null 2>&1 && break
  kill -0 "$BRIDGE_NODE_PID" 2>/dev/null || { cat "$WORK/bridgenode.log"; exit 1; }
  sleep 0.1
done
bc faucet alice --value 10 >/dev/null
bc faucet bridge --value 10 >/dev/null
bc faucet bob --value 1 >/dev/null

step "Ethereum events: alice deploys a listener entitled to the vault's events and pays 0.01 CBY for its subscription"
L=$(bc actor deploy --from alice --code examples/ethbridge/listener.py --salt eth --require "eth:$CHAIN:$VAULT_LC:*" | awk '/Actor deployed/ {print $3}')
echo "Listener $L (manifest: eth:$CHAIN:$VAULT_LC:*)"
bc bridge subscribe "$L" --from alice --chain-id "$CHAIN" --contract "$VAULT" --event 'Deposit(address,bytes32,uint256)' --value 0.01 | grep -E "^(Transaction|  *(status|result|error))" | head -3
bc bridge wrap --from bridge --chain-id "$CHAIN" --asset "$VAULT" --name "Wrapped Vault ETH" --symbol wVETH | grep -E "^(Transaction|  *(status|result|error))" | head -3
WTOKEN=$(bc token list --json | python3 -c 'import json,sys;print([t["id"] for t in json.load(sys.stdin) if t["symbol"]=="wVETH"][0])')
echo "Wrapped token $WTOKEN (admin: the bridge module 0x…11)"
echo "A bridge instruction from a key outside the bridge set is refused:"
bc bridge wrap --from alice --chain-id "$CHAIN" --asset 0x0000000000000000000000000000000000000001 --name X --symbol X 2>&1 | grep -o 'NotBridgeMember[^"]*' | head -1 || true

step "Ethereum events: cowboy-ethrelay (the bridge member) watches the vault; a deposit of 1.5 to bob on Ethereum"
"$BIN/cowboy-ethrelay" run --node "$BNODE" --eth "$ETH" --from bridge --contract "$VAULT" --actor "$L" --mint-asset "$VAULT" \
  --confirmations 2 --poll 250ms 2>"$WORK/ethrelay.log" &
RELAYER_PID=$!
EXTRA_PIDS+=("$RELAYER_PID")
"$BIN/cowboy-ethrelay" vault deposit --eth "$ETH" --vault "$VAULT" --to "$BOB_ADDR" --amount 1500000000000000000
for _ in $(seq 1 600); do
  [ "$(bc actor query "$L" count 2>/dev/null | tail -1)" = 1 ] && break
  kill -0 "$RELAYER_PID" 2>/dev/null || { cat "$WORK/ethrelay.log"; exit 1; }
  sleep 0.1
done
echo "After 2 confirmations the log reached the actor's on_eth_event handler:"
bc actor query "$L" last
bc events --emitter 0x0000000000000000000000000000000000000011 --topic BridgeEventDelivered | tail -3
echo "and minted the wrapped token to bob:"
bc token balance "$WTOKEN" bob
bc bridge subscriptions "$L"
bc bridge burn --from bob "$WTOKEN" 500000000000000000 --recipient 0x00000000000000000000000000000000000000b0 | grep -E "^(Transaction|  *(status|result|error))" | head -3
echo "bob burned 0.5 to unlock on Ethereum (BridgeBurned event for the bridge):"
bc token balance "$WTOKEN" bob
kill -TERM "$RELAYER_PID" "$BRIDGE_NODE_PID" "$GETH_PID" 2>/dev/null || true
wait "$RELAYER_PID" "$BRIDGE_NODE_PID" "$GETH_PID" 2>/dev/null || true
fi

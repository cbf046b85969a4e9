# Sourced by scripts/demo.sh (needs BIN, WORK, COWBOY_NODE, step, EXTRA_PIDS
# and a funded key "alice"): three cowboy-runner daemons serve an HTTP price
# job, an LLM job and an MCP job posted by examples/jobs/agent.py, and the
# verified callbacks and payouts are printed.

free_port() { python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])'; }

step "Off-chain compute: local services for the three job kinds"
mkdir -p "$WORK/prices"
printf '{"symbol": "BTC-USD", "price": 97000.5}\n' > "$WORK/prices/btc.json"
PRICE_PORT=$(free_port)
python3 -m http.server "$PRICE_PORT" --bind 127.0.0.1 --directory "$WORK/prices" >"$WORK/prices.log" 2>&1 &
EXTRA_PIDS+=($!)
echo "HTTP price feed       http://127.0.0.1:$PRICE_PORT/btc.json (python3 -m http.server)"
if [ -n "${COWBOY_LLM_BASE_URL:-}" ]; then
  LLM_URL=$COWBOY_LLM_BASE_URL
  LLM_MODEL=${COWBOY_LLM_MODEL:-gpt-4o-mini}
  echo "LLM endpoint          $LLM_URL (model $LLM_MODEL${COWBOY_LLM_API_KEY:+, key from COWBOY_LLM_API_KEY})"
else
  LLM_PORT=$(free_port)
  "$BIN/cowboy-runner" llm-standin --listen "127.0.0.1:$LLM_PORT" >"$WORK/standin.log" 2>&1 &
  EXTRA_PIDS+=($!)
  LLM_URL=http://127.0.0.1:$LLM_PORT/v1
  LLM_MODEL=cowboy-local-standin
  echo "LLM endpoint          $LLM_URL — COWBOY_LLM_BASE_URL is not set, so this is the LOCAL STAND-IN"
  echo "                      (speaks the OpenAI wire format, answers by rule; it is not a language model)"
fi
MCP_JS=$PWD/node_modules/@modelcontextprotocol/server-everything/dist/index.js
[ -f "$MCP_JS" ] || { echo "missing $MCP_JS: run make deps" >&2; exit 1; }
echo "MCP server            @modelcontextprotocol/server-everything over stdio (each runner starts its own)"

cat > "$WORK/executors.toml" <<EOF

[[executors.llm.models]]
name = "$LLM_MODEL"
base_url = "$LLM_URL"
api_key_env = "${COWBOY_LLM_API_KEY:+COWBOY_LLM_API_KEY}"

[[executors.mcp.servers]]
name = "everything"
command = "node"
args = ["$MCP_JS", "stdio"]
EOF

step "Starting 3 runners (cowboy-runner), each staking 10 CBY in the Runner Registry"
RUNNER_HOMES=()
for i in 1 2 3; do
  home="$WORK/runner$i"
  "$BIN/cowboy-runner" init --home "$home" --node "$COWBOY_NODE" --stake 10 --job-types http,llm,mcp \
    --domains 127.0.0.1 --listen 127.0.0.1:0 --metrics 127.0.0.1:0 --allow-private --light-kdf \
    --append "$WORK/executors.toml" >"$home.init" 
  addr=$(awk '/^account/ {print $2}' "$home.init")
  "$BIN/cowboy" faucet "$addr" --value 20 >/dev/null
  "$BIN/cowboy-runner" run --home "$home" >"$home.log" 2>&1 &
  EXTRA_PIDS+=($!)
  RUNNER_HOMES+=("$home")
  echo "runner $i  $addr"
done
for home in "${RUNNER_HOMES[@]}"; do
  for _ in $(seq 1 200); do [ -f "$home/run.json" ] && break; sleep 0.1; done
  [ -f "$home/run.json" ] || { echo "runner $home did not start:" >&2; tail -20 "$home.log" >&2; exit 1; }
done
"$BIN/cowboy" runner list

step "alice deploys the agent actor (examples/jobs/agent.py) with 1 CBY for escrows and asks for work"
AG=$("$BIN/cowboy" actor deploy --from alice --code examples/jobs/agent.py --manifest examples/jobs/agent.manifest.json --salt agent-1 --value 1 | awk '/Actor deployed/ {print $3}')
echo "agent $AG"
HTTP_IN="{\"url\": \"http://127.0.0.1:$PRICE_PORT/btc.json\", \"extract\": [{\"kind\": \"jsonpath\", \"query\": \"\$.price\", \"name\": \"price\"}]}"
LLM_IN="{\"model\": \"$LLM_MODEL\", \"system\": \"Answer with JSON only.\", \"prompt\": \"What is the sentiment of: I love how fast this chain settles?\", \"temperature\": 0, \"seed\": 7}"
LLM_SCHEMA='{"type":"object","properties":{"sentiment":{"type":"string","enum":["positive","negative","neutral"]}},"required":["sentiment"],"additionalProperties":false}'
MCP_IN='{"server": "everything", "tool": "get-structured-content", "arguments": {"location": "Chicago"}}'
payload() { python3 -c 'import json,sys;print(json.dumps(sys.argv[1:]))' "$@"; }
echo "HTTP job: $HTTP_IN"
"$BIN/cowboy" actor call --from alice "$AG" ask_http --payload "$(payload "$HTTP_IN" /price 127.0.0.1)" >/dev/null
echo "LLM job:  $LLM_IN"
"$BIN/cowboy" actor call --from alice "$AG" ask_llm --payload "$(payload "$LLM_IN" /sentiment "$LLM_SCHEMA")" >/dev/null
echo "MCP job:  $MCP_IN"
"$BIN/cowboy" actor call --from alice "$AG" ask_mcp --payload "$(payload "$MCP_IN" /temperature)" >/dev/null

step "Waiting for the committees: execute, commit, aggregate, verify (callbacks into the agent)"
for _ in $(seq 1 240); do
  "$BIN/cowboy" actor query "$AG" results 2>/dev/null | grep -q '"pending"' || break
  sleep 0.25
done
"$BIN/cowboy" actor query "$AG" results | python3 -c 'import json,sys
for j in json.load(sys.stdin): print("  %-4s %s  %-8s %s" % (j[1], j[0][:18] + "…", j[2], j[3]))'

step "Payouts (after the challenge window): burn, treasury, the agreeing runners, refund to the agent"
JOB_IDS=$("$BIN/cowboy" actor query "$AG" results | python3 -c 'import json,sys
for j in json.load(sys.stdin): print(j[0])')
for id in $JOB_IDS; do
  for _ in $(seq 1 120); do
    st=$("$BIN/cowboy" job show "$id" --json | python3 -c 'import json,sys;print(json.load(sys.stdin)["status"])')
    [ "$st" = finalized ] || [ "$st" = failed ] && break
    sleep 0.25
  done
  "$BIN/cowboy" job show "$id" | grep -E '^(Job|Status|Type|Result|Agreed|Settled|  )'
done

step "Runner status and metrics"
"$BIN/cowboy-runner" status --home "${RUNNER_HOMES[0]}"
metrics=$(python3 -c 'import json,sys;print(json.load(open(sys.argv[1]))["metrics"])' "${RUNNER_HOMES[0]}/run.json")
curl -s "http://$metrics/metrics" | grep -E '^cowboy_runner_(jobs_total|earnings_cby_total|stake_cby)' || true

step "Stopping the runners (SIGTERM: in-flight work is persisted)"
for p in "${EXTRA_PIDS[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
for p in "${EXTRA_PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
EXTRA_PIDS=()

# Governance (docs/GOVERNANCE.md), sourced by scripts/demo.sh: the devnet's
# validator proposes a Tier 0 parameter change, votes for it, and the
# change is in force after the (devnet-short) timelock.
step "Governance: the validator proposes runners.heartbeat_timeout_blocks = 90 (Tier 0)"
"$BIN/cowboy" keys import validator --key-file "$WORK/node/validator.key" --light-kdf >/dev/null
"$BIN/cowboy" params runners.heartbeat_timeout_blocks
GOV_OUT=$("$BIN/cowboy" gov propose --tier 0 --param runners.heartbeat_timeout_blocks=90 --title "Longer runner heartbeat timeout" --from validator)
echo "$GOV_OUT"
GOV_ID=$(sed -n 's/^Proposal \([0-9]*\) .*/\1/p' <<<"$GOV_OUT")

step "The validator votes yes: both chambers pass, the proposal queues for its timelock, then executes"
"$BIN/cowboy" gov vote "$GOV_ID" yes --from validator >/dev/null
for _ in $(seq 1 600); do
  "$BIN/cowboy" gov show "$GOV_ID" --json | grep -Eq '"status": ?"executed"' && break
  sleep 0.1
done
"$BIN/cowboy" gov show "$GOV_ID"
"$BIN/cowboy" params runners.heartbeat_timeout_blocks
"$BIN/cowboy" treasury show

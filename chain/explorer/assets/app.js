// Cowboy explorer: a single-page app over the node's public HTTP API
// (docs/API.md). Everything is built with DOM nodes and textContent, never
// innerHTML, because most of what it shows (actor code, handler names,
// errors, event data) is chosen by whoever sent a transaction.
'use strict';

const SYS = {
  jobs: '0x0000000000000000000000000000000000000002',
  storage: '0x000000000000000000000000000000000000000a',
};
const BLOCKS_SHOWN = 20;
const LIST_LIMIT = 50;

// ---------- small helpers ----------

function h(tag, attrs, ...kids) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'class') el.className = v;
    else if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  for (const kid of kids.flat(Infinity)) {
    if (kid === undefined || kid === null || kid === false) continue;
    el.append(kid instanceof Node ? kid : document.createTextNode(String(kid)));
  }
  return el;
}

class APIError extends Error {
  constructor(status, code, message) { super(message); this.status = status; this.code = code; }
}

async function api(path, opts) {
  const r = await fetch('/v1' + path, opts);
  let body = null;
  try { body = await r.json(); } catch (_) { /* not JSON */ }
  if (!r.ok) {
    const e = body && body.error ? body.error : {};
    throw new APIError(r.status, e.code || 'http_' + r.status, e.message || r.statusText);
  }
  return body;
}

async function apiOrNull(path) {
  try { return await api(path); } catch (e) { if (e.status === 404) return null; throw e; }
}

const WEI = 10n ** 18n;
// cby renders base units as CBY with up to 6 decimals; the exact base units
// stay in data-raw so tests and curious users can compare with the API.
function cby(base) {
  if (base === undefined || base === null || base === '') return h('span', { class: 'muted' }, '—');
  let v;
  try { v = BigInt(base); } catch (_) { return h('span', {}, String(base)); }
  const neg = v < 0n; if (neg) v = -v;
  const whole = v / WEI;
  let frac = (v % WEI).toString().padStart(18, '0').slice(0, 6).replace(/0+$/, '');
  const txt = (neg ? '-' : '') + whole.toLocaleString('en-US') + (frac ? '.' + frac : '') + ' CBY';
  return h('span', { class: 'amount', 'data-raw': String(base), title: String(base) + ' base units' }, txt);
}

function joinNodes(nodes, sep = ', ') { return nodes.flatMap((n, i) => (i ? [sep, n] : [n])); }
function short(x) { x = String(x || ''); return x.length > 18 ? x.slice(0, 10) + '…' + x.slice(-6) : x; }
function num(n) { return h('span', { 'data-raw': String(n) }, Number(n).toLocaleString('en-US')); }
function link(kind, id, label) { return h('a', { href: '#/' + kind + '/' + id, class: 'mono', title: String(id) }, label || short(id)); }
const addr = (a) => a ? link('account', a) : h('span', { class: 'muted' }, '—');
function when(ms) { return ms ? new Date(Number(ms)).toISOString().replace('T', ' ').replace(/\.\d+Z$/, ' UTC') : '—'; }
function pill(text, kind) { return h('span', { class: 'pill ' + (kind || '') }, text); }
function statusPill(s) {
  const good = ['success', 'active', 'finalized', 'verified', 'answered', 'claimed', 'healthy'];
  const bad = ['failed', 'exited', 'missed', 'refused', 'slashed', 'evicted'];
  return pill(s, good.includes(s) ? 'ok' : bad.includes(s) ? 'bad' : 'warn');
}
function kv(rows) {
  return h('dl', { class: 'kv' }, rows.filter(Boolean).map(([k, v, field]) => [h('dt', {}, k), h('dd', field ? { 'data-field': field } : {}, v)]));
}
function table(headers, rows, attrs) {
  return h('table', attrs || {}, h('thead', {}, h('tr', {}, headers.map((x) => h('th', {}, x)))),
    h('tbody', {}, rows.length ? rows : [h('tr', {}, h('td', { colspan: headers.length, class: 'muted' }, 'none'))]));
}
function card(k, v, field) { return h('div', { class: 'card' }, h('div', { class: 'k' }, k), h('div', { class: 'v', 'data-field': field }, v)); }
function json(v) { return h('pre', {}, JSON.stringify(v, null, 2)); }

// ---------- the live stream ----------

const live = { source: null, listeners: new Set(), last: null };
function startStream() {
  const dot = document.getElementById('live');
  const src = new EventSource('/v1/stream');
  live.source = src;
  src.onopen = () => { dot.textContent = '● live'; dot.classList.add('on'); };
  src.onerror = () => { dot.textContent = '○ reconnecting'; dot.classList.remove('on'); };
  src.addEventListener('block', (ev) => {
    let b;
    try { b = JSON.parse(ev.data); } catch (_) { return; }
    live.last = b;
    for (const fn of live.listeners) { try { fn(b); } catch (e) { console.error(e); } }
  });
}
// onBlock registers fn for the current page only; the router clears it.
function onBlock(fn) { live.listeners.add(fn); }

// ---------- pages ----------

async function pageChain(main) {
  const st = await api('/status');
  main.append(h('h1', {}, 'Chain ', h('span', { class: 'muted' }, '#' + st.chain_id)));
  const cards = h('div', { class: 'cards', id: 'status-cards' });
  const fill = (s) => {
    cards.replaceChildren(
      card('Height (executed)', num(s.height), 'height'),
      card('Finalized', num(s.finalized_height), 'finalized_height'),
      card('Committed (QC)', num(s.committed_height), 'committed_height'),
      card('Pending txs', num(s.pending_txs), 'pending_txs'),
      card('Basefee / cycle', num(s.basefee_cycle), 'basefee_cycle'),
      card('Basefee / cell', num(s.basefee_cell), 'basefee_cell'),
      card('Genesis supply', cby(s.genesis_supply), 'genesis_supply'),
      card('Burned', cby(s.burned), 'burned'),
      card('Minted', cby(s.minted), 'minted'),
      card('Node version', s.version, 'version'),
    );
    if (s.consensus) {
      const c = s.consensus;
      cards.append(card('Validators', num(c.validators), 'validators'), card('Round', num(c.round), 'round'),
        card('Peers heard', num(c.peers), 'peers'), card('Epoch (ends)', c.epoch + ' (' + c.epoch_end + ')', 'epoch'));
    }
  };
  fill(st);
  main.append(cards);

  if (st.faucet) main.append(h('h2', {}, 'Devnet faucet'), faucetForm());

  main.append(h('h2', {}, 'Block interval (last ' + BLOCKS_SHOWN + ' blocks)'));
  const spark = h('div', { id: 'spark' });
  main.append(spark);
  main.append(h('h2', {}, 'Latest blocks'));
  const body = h('tbody', { id: 'blocks' });
  main.append(h('table', {}, h('thead', {}, h('tr', {}, ['Height', 'Hash', 'Txs', 'Cycles', 'Time', 'Proposer'].map((x) => h('th', {}, x)))), body));

  const blocks = [];
  for (let i = st.height; i >= 1 && blocks.length < BLOCKS_SHOWN; i--) blocks.push(api('/blocks/' + i));
  const got = (await Promise.all(blocks)).filter(Boolean);
  const render = () => {
    body.replaceChildren(...got.map(blockRow));
    spark.replaceChildren(sparkline(got.map((b) => Number(b.header.timestamp_ms)).reverse()));
  };
  render();
  onBlock(async (b) => {
    if (got.length && got[0].header.height >= b.header.height) return;
    got.unshift(b);
    got.length = Math.min(got.length, BLOCKS_SHOWN);
    render();
    try { fill(await api('/status')); } catch (_) { /* keep the last figures */ }
  });
}

function blockRow(b) {
  const hd = b.header;
  const txs = (b.tx_hashes || []).length;
  return h('tr', { 'data-height': hd.height },
    h('td', {}, link('block', hd.height, String(hd.height))), h('td', {}, link('block', b.hash)),
    h('td', { 'data-field': 'txs' }, txs), h('td', {}, num(hd.cycles_used)), h('td', {}, when(hd.timestamp_ms)),
    h('td', {}, addr(hd.proposer)));
}

// sparkline draws block intervals (ms) as an SVG polyline.
function sparkline(ts) {
  const ns = 'http://www.w3.org/2000/svg';
  const svg = document.createElementNS(ns, 'svg');
  svg.setAttribute('class', 'spark');
  svg.setAttribute('viewBox', '0 0 600 70');
  svg.setAttribute('preserveAspectRatio', 'none');
  const d = [];
  for (let i = 1; i < ts.length; i++) d.push(ts[i] - ts[i - 1]);
  if (d.length < 2) return svg;
  const max = Math.max(...d, 1);
  const pts = d.map((v, i) => `${(i / (d.length - 1)) * 590 + 5},${65 - (v / max) * 55}`).join(' ');
  const line = document.createElementNS(ns, 'polyline');
  line.setAttribute('points', pts);
  line.setAttribute('fill', 'none');
  line.setAttribute('stroke', '#b5541c');
  line.setAttribute('stroke-width', '2');
  svg.append(line);
  const avg = d.reduce((a, b) => a + b, 0) / d.length;
  return h('div', {}, svg, h('div', { class: 'muted', id: 'interval' }, `mean ${Math.round(avg)} ms · max ${max} ms · min ${Math.min(...d)} ms`));
}

function faucetForm() {
  const out = h('span', { class: 'muted', id: 'faucet-out' });
  const form = h('form', { class: 'inline', id: 'faucet' },
    h('input', { name: 'address', placeholder: '0x… address', required: true, pattern: '0x[0-9a-fA-F]{40}' }),
    h('input', { name: 'value', placeholder: 'CBY', value: '10', required: true, pattern: '[0-9]+(\\.[0-9]{1,18})?' }),
    h('button', { type: 'submit' }, 'Send'), out);
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const f = new FormData(form);
    const [w, fr = ''] = String(f.get('value')).split('.');
    const value = (BigInt(w) * WEI + BigInt((fr + '0'.repeat(18)).slice(0, 18))).toString();
    out.replaceChildren('sending…');
    try {
      const r = await api('/faucet', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ address: f.get('address'), value }) });
      out.replaceChildren('sent: ', link('tx', r.hash));
    } catch (e) {
      out.replaceChildren(h('span', { class: 'bad' }, e.code + ': ' + e.message));
    }
  });
  return form;
}

async function pageBlocks(main) {
  const st = await api('/status');
  const from = Number(new URLSearchParams(location.hash.split('?')[1] || '').get('from')) || st.height;
  main.append(h('h1', {}, 'Blocks'));
  const reqs = [];
  for (let i = from; i >= 1 && reqs.length < LIST_LIMIT; i--) reqs.push(api('/blocks/' + i));
  const got = await Promise.all(reqs);
  main.append(table(['Height', 'Hash', 'Txs', 'Cycles', 'Time', 'Proposer'], got.map(blockRow), { id: 'block-list' }));
  const older = from - LIST_LIMIT;
  if (older >= 1) main.append(h('p', {}, h('a', { href: '#/blocks?from=' + older }, 'older blocks →')));
}

function receiptStatus(r) {
  return r ? statusPill(r.status) : pill('pending', 'warn');
}

async function pageBlock(main, id) {
  const b = await api('/blocks/' + encodeURIComponent(id) + '?receipts=true');
  const hd = b.header;
  main.append(h('h1', {}, 'Block ', h('span', { 'data-field': 'height' }, hd.height)));
  main.append(kv([
    ['Hash', h('span', { class: 'mono' }, b.hash), 'hash'],
    ['Parent', hd.height > 1 ? link('block', hd.height - 1, hd.parent_hash) : h('span', { class: 'mono' }, hd.parent_hash)],
    ['Time', when(hd.timestamp_ms)], ['Proposer', addr(hd.proposer)],
    ['State root', h('span', { class: 'mono' }, hd.state_root), 'state_root'],
    ['Tx root', h('span', { class: 'mono' }, hd.tx_root)], ['Receipts root', h('span', { class: 'mono' }, hd.receipts_root)],
    ['Cycles used', num(hd.cycles_used), 'cycles_used'], ['Cells used', num(hd.cells_used), 'cells_used'],
    ['Basefee cycle / cell', hd.basefee_cycle + ' / ' + hd.basefee_cell],
  ]));
  const rs = b.receipts || [];
  main.append(h('h2', {}, 'Transactions and system receipts (' + rs.length + ')'));
  main.append(table(['#', 'Hash', 'Kind', 'Status', 'Cycles', 'Fee', 'Events', 'Error'], rs.map((r, i) => h('tr', {},
    h('td', {}, i), h('td', {}, link('tx', r.tx_hash)), h('td', {}, r.kind || 'tx'), h('td', {}, receiptStatus(r)),
    h('td', {}, num(r.cycles_used)), h('td', {}, cby(r.fee_paid)), h('td', {}, (r.events || []).map((e) => e.topic).join(', ')),
    h('td', { class: 'bad' }, r.error || ''))), { id: 'block-receipts' }));
  const nav = h('p', {});
  if (hd.height > 1) nav.append(link('block', hd.height - 1, '← ' + (hd.height - 1)), ' ');
  nav.append(link('block', hd.height + 1, (hd.height + 1) + ' →'));
  main.append(nav);
}

function eventsTable(evs) {
  return table(['Emitter', 'Topic', 'Data', 'Where'], evs.map((e) => h('tr', {},
    h('td', {}, addr(e.emitter)), h('td', {}, e.topic),
    h('td', {}, e.decoded ? h('code', {}, JSON.stringify(e.decoded)) : h('code', {}, e.data)),
    h('td', {}, e.tx_hash ? link('tx', e.tx_hash) : '', e.height ? [' @ ', link('block', e.height, String(e.height))] : ''))));
}

// messageTree renders the receipt's message records (spec 002 §4) as the
// call tree they form through their parent indices.
function messageTree(msgs) {
  if (!msgs || !msgs.length) return h('p', { class: 'muted' }, 'no inter-actor messages');
  return h('ul', { class: 'tree', id: 'messages' }, msgs.map((m) => {
    const d = m.depth > 4 ? 'dn' : 'd' + m.depth;
    return h('li', { class: d }, m.status === 0 || m.status === undefined ? '✓ ' : '✗ ', addr(m.from), ' → ', addr(m.to), ' ',
      h('code', {}, m.handler || '(transfer)'), m.value && m.value !== '0' && m.value !== 0 ? [' ', cby(m.value)] : '',
      m.error ? h('span', { class: 'bad' }, ' ' + m.error) : '');
  }));
}

async function pageTx(main, hash) {
  const t = await api('/txs/' + encodeURIComponent(hash));
  const r = t.receipt;
  main.append(h('h1', {}, t.kind === 'timer' ? 'Timer execution' : 'Transaction'));
  const rows = [['Hash', h('span', { class: 'mono' }, hash), 'hash'], ['Status', t.status === 'pending' ? pill('pending', 'warn') : receiptStatus(r), 'status']];
  if (t.block_height) rows.push(['Block', link('block', t.block_height, String(t.block_height)), 'block_height'], ['Index', t.index]);
  if (t.tx && t.tx.hash) {
    const x = t.tx;
    rows.push(['From', addr(x.from), 'from'], ['To', x.to ? addr(x.to) : h('span', { class: 'muted' }, '(create)'), 'to'],
      ['Value', cby(x.value), 'value'], ['Nonce', x.nonce, 'nonce'],
      ['Limits (cycles / cells)', x.cycles_limit + ' / ' + x.cells_limit],
      ['Max fee (cycle / cell)', x.max_fee_per_cycle + ' / ' + x.max_fee_per_cell],
      ['Tip (cycle / cell)', x.tip_per_cycle + ' / ' + x.tip_per_cell],
      ['Payload', h('code', {}, x.payload && x.payload.length > 200 ? x.payload.slice(0, 200) + '…' : x.payload || '0x')]);
  }
  if (r) {
    rows.push(['Cycles / cells used', r.cycles_used + ' / ' + r.cells_used, 'cycles_used'], ['Fee paid', cby(r.fee_paid), 'fee_paid'],
      ['Burned', cby(r.burned)], ['Tip', cby(r.tip)]);
    if (r.created) rows.push(['Created actor', addr(r.created)]);
    if (r.error) rows.push(['Error', h('span', { class: 'bad' }, r.error), 'error']);
    if (r.decoded) rows.push(['Return', h('code', {}, JSON.stringify(r.decoded))]);
  }
  main.append(kv(rows));
  if (r) {
    main.append(h('h2', {}, 'Message tree'), messageTree(r.messages));
    main.append(h('h2', {}, 'Events (' + (r.events || []).length + ')'), eventsTable(r.events || []));
  } else {
    onBlock(softRefresh);
  }
}

async function pageAccount(main, a) {
  const [acct, actor] = await Promise.all([api('/accounts/' + a), apiOrNull('/actors/' + a)]);
  main.append(h('h1', {}, actor ? 'Actor' : 'Account'));
  main.append(kv([
    ['Address', h('span', { class: 'mono' }, acct.address), 'address'], ['Balance', cby(acct.balance), 'balance'],
    ['Nonce', acct.nonce, 'nonce'], ['Pending nonce', acct.pending_nonce],
    ['Code hash', acct.code_hash ? h('span', { class: 'mono' }, acct.code_hash) : h('span', { class: 'muted' }, 'none (externally owned)')],
    ['At height', acct.height],
  ]));
  if (actor) {
    main.append(h('h2', {}, 'Actor'), kv([
      ['Owner', addr(actor.owner), 'owner'], ['Code size', num(actor.code_size) , 'code_size'],
      ['Storage bytes', num(actor.storage_bytes), 'storage_bytes'],
      ['Pins', Object.keys(actor.pins || {}).length ? h('code', {}, JSON.stringify(actor.pins)) : h('span', { class: 'muted' }, 'none')],
      ['Entitlements', (actor.requires || []).length ? (actor.requires || []).map((r) => r.entitlement).join(', ') : h('span', { class: 'muted' }, 'none declared')],
    ]));
    const [code, stateRes, timers] = await Promise.all([
      fetch('/v1/actors/' + a + '/code').then((r) => r.ok ? r.text() : ''),
      apiOrNull('/actors/' + a + '/state?limit=' + LIST_LIMIT), apiOrNull('/timers?owner=' + a)]);
    const entries = (stateRes && stateRes.entries) || [];
    main.append(h('h2', {}, 'Storage (' + entries.length + (stateRes && stateRes.next_cursor ? '+' : '') + ' keys)'),
      table(['Key', 'Value'], entries.map((e) => h('tr', {}, h('td', {}, h('code', {}, e.key_text || e.key)),
        h('td', {}, h('code', {}, e.decoded !== undefined && e.decoded !== null ? JSON.stringify(e.decoded) : e.value)))), { id: 'storage' }));
    const ts = (timers && timers.timers) || [];
    main.append(h('h2', {}, 'Pending timers (' + ts.length + ')'),
      table(['Id', 'Target height', 'Handler', 'Interval', 'Deposit', 'Deferrals'], ts.map((t) => h('tr', {}, h('td', {}, h('code', {}, short(t.id))),
        h('td', {}, t.target, t.due ? [' ', pill('due', 'warn')] : ''), h('td', {}, h('code', {}, t.handler || '')), h('td', {}, t.interval || 'one-shot'),
        h('td', {}, cby(t.deposit)), h('td', {}, t.deferrals))), { id: 'timers' }));
    main.append(h('h2', {}, 'Code'), h('pre', { id: 'code' }, code));
  }
  const ev = await apiOrNull('/events?emitter=' + a + '&limit=' + LIST_LIMIT);
  if (ev && ev.events && ev.events.length) main.append(h('h2', {}, 'Events emitted'), eventsTable(ev.events));
}

// eventsAll pages through an event query (bounded, newest last).
async function eventsAll(q, max = 1000) {
  const out = [];
  let cursor = '';
  while (out.length < max) {
    const r = await api('/events?' + q + '&limit=1000' + (cursor ? '&cursor=' + encodeURIComponent(cursor) : ''));
    out.push(...(r.events || []));
    if (!r.next_cursor) break;
    cursor = r.next_cursor;
  }
  return out;
}

async function pageJobs(main) {
  main.append(h('h1', {}, 'Jobs'));
  const evs = (await eventsAll('emitter=' + SYS.jobs + '&topic=JobSubmitted')).reverse().slice(0, LIST_LIMIT);
  const jobs = await Promise.all(evs.map((e) => apiOrNull('/jobs/' + (e.decoded && e.decoded.job_id))));
  main.append(table(['Job', 'Type', 'Status', 'Submitter', 'Submitted', 'Committee', 'Max price'], jobs.filter(Boolean).map((j) => h('tr', { 'data-job': j.id },
    h('td', {}, link('job', j.id)), h('td', {}, j.job_type), h('td', { 'data-field': 'status' }, statusPill(j.status)),
    h('td', {}, addr(j.submitter)), h('td', {}, link('block', j.submitted_at, String(j.submitted_at))),
    h('td', {}, (j.committee || []).length), h('td', {}, cby(j.max_price)))), { id: 'job-list' }));
  onBlock((b) => { if ((b.receipts || []).some((r) => (r.events || []).some((e) => e.emitter === SYS.jobs))) softRefresh(); });
}

// jobTimeline lays out assignment → commits → reveal → verification →
// payout from the job record, each step marked done once the chain shows it.
function jobTimeline(j) {
  const failed = j.status === 'failed';
  const step = (done, title, detail, at) => h('li', { class: done ? 'done' : failed ? 'failed' : '' }, h('strong', {}, title),
    at ? h('span', { class: 'when' }, '@ ', link('block', at, String(at))) : '', detail ? h('div', {}, detail) : '');
  const commits = j.commitments || [];
  const reveals = j.reveals || [];
  const verified = ['verified', 'finalized'].includes(j.status);
  return h('ol', { class: 'timeline', id: 'timeline' },
    step(true, 'Submitted', ['by ', addr(j.submitter), ', max price ', cby(j.max_price)], j.submitted_at),
    step((j.committee || []).length > 0, 'Assigned', (j.committee || []).length ? ['committee of ' + j.committee.length + ', aggregator ', addr(j.aggregator), j.retry ? ' (retry ' + j.retry + ')' : ''] : 'waiting for a committee'),
    step(commits.length > 0, 'Commitments ' + commits.length + '/' + (j.committee || []).length, commits.map((c) => h('div', {}, addr(c.runner), ' @ ', link('block', c.block, String(c.block))))),
    step(reveals.length > 0, 'Revealed', reveals.length ? reveals.length + ' reveal(s)' : ''),
    step(verified, failed ? 'Failed' + (j.fail_reason ? ': ' + j.fail_reason : '') : 'Verified',
      (j.agreed || []).length ? ['agreed: ', joinNodes((j.agreed || []).map(addr)), (j.dissented || []).length ? [' · dissented: ', joinNodes(j.dissented.map(addr))] : ''] : ''),
    step(!!j.payments, 'Paid out', j.payments ? [j.payments.outcome, ': ', cby(j.payments.payment), ' paid, ', cby(j.payments.refund), ' refunded'] : ''),
    step((j.callbacks || []).length > 0, 'Callback delivered', (j.callbacks || []).map((c) => h('div', {}, c.ok ? '✓ ' : '✗ ', c.status, ' @ ', link('block', c.height, String(c.height)), c.error ? h('span', { class: 'bad' }, ' ' + c.error) : ''))),
  );
}

async function pageJob(main, id) {
  const j = await api('/jobs/' + encodeURIComponent(id));
  main.append(h('h1', {}, 'Job ', h('span', { class: 'mono' }, short(j.id))));
  main.append(kv([
    ['Id', h('span', { class: 'mono' }, j.id), 'id'], ['Status', statusPill(j.status), 'status'], ['Type / mode', j.job_type + ' / ' + j.mode],
    ['Submitter', addr(j.submitter)], ['Callback', [addr(j.callback_actor), ' ', h('code', {}, j.callback_handler || '')]],
    ['Deadline', j.deadline], ['Candidate root', h('span', { class: 'mono' }, j.candidate_root)],
    j.result_hash && !/^0x0+$/.test(j.result_hash) ? ['Result hash', h('span', { class: 'mono' }, j.result_hash)] : null,
  ]));
  main.append(h('h2', {}, 'Timeline'), jobTimeline(j));
  const commits = new Map((j.commitments || []).map((c) => [c.runner, c]));
  const reveals = new Map((j.reveals || []).map((r) => [r.runner, r]));
  main.append(h('h2', {}, 'Committee'), table(['Runner', 'Role', 'Committed', 'Revealed', 'Verdict'], (j.committee || []).map((r) => h('tr', {},
    h('td', {}, link('runner', r)), h('td', {}, r === j.aggregator ? 'aggregator' : 'member'),
    h('td', {}, commits.has(r) ? link('block', commits.get(r).block, '@ ' + commits.get(r).block) : '—'),
    h('td', {}, reveals.has(r) ? '✓' : '—'),
    h('td', {}, (j.agreed || []).includes(r) ? pill('agreed', 'ok') : (j.dissented || []).includes(r) ? pill('dissented', 'bad') : '—'))), { id: 'committee' }));
  if (j.payments) {
    main.append(h('h2', {}, 'Payout'), table(['Kind', 'To', 'Amount'], (j.payments.transfers || []).map((p) => h('tr', {},
      h('td', {}, p.kind), h('td', {}, addr(p.to)), h('td', {}, cby(p.amount)))), { id: 'payments' }));
  }
  if (!['finalized', 'failed'].includes(j.status)) onBlock(softRefresh);
}

async function pageRunners(main) {
  const rs = await api('/runners?all=true');
  main.append(h('h1', {}, 'Runners'));
  main.append(table(['Runner', 'Status', 'Health', 'Stake', 'Effective', 'Reputation', 'Jobs', 'Types'], rs.map((r) => h('tr', { 'data-runner': r.address },
    h('td', {}, link('runner', r.address)), h('td', {}, statusPill(r.status)), h('td', {}, r.healthy ? pill('healthy', 'ok') : pill('unhealthy', 'bad')),
    h('td', {}, cby(r.stake)), h('td', {}, cby(r.effective_stake)), h('td', { 'data-field': 'reputation' }, r.reputation),
    h('td', {}, r.active_jobs + '/' + r.max_concurrent_jobs), h('td', {}, (r.job_types || []).join(', ')))), { id: 'runner-list' }));
}

async function pageRunner(main, a) {
  const [r, dels] = await Promise.all([api('/runners/' + a), apiOrNull('/runners/' + a + '/delegations')]);
  main.append(h('h1', {}, 'Runner ', h('span', { class: 'mono' }, short(a))));
  main.append(kv([
    ['Address', addr(r.address)], ['Status', statusPill(r.status)], ['Healthy', r.healthy ? pill('yes', 'ok') : pill('no', 'bad')],
    ['Stake (self)', cby(r.stake), 'stake'], ['Delegated', cby(r.delegated)], ['Effective stake', cby(r.effective_stake)],
    ['Commission', (r.commission_bps / 100) + ' %'], ['Reputation', r.reputation, 'reputation'],
    ['Consecutive slashes', r.consecutive_slashes], ['Eligible', String(r.eligible)],
    ['Job types', (r.job_types || []).join(', ')], ['Models', (r.models || []).join(', ') || '—'], ['Domains', (r.domains || []).join(', ') || '—'],
    ['TEE', String(r.tee)], ['Active jobs', r.active_jobs + ' / ' + r.max_concurrent_jobs],
    ['Registered / last heartbeat', r.registered_at + ' / ' + r.last_heartbeat], ['Aggregator endpoint', r.endpoint || '—'],
  ]));
  const ds = Array.isArray(dels) ? dels : [];
  main.append(h('h2', {}, 'Delegations (' + ds.length + ')'), table(['Delegator', 'Amount', 'Since'], ds.map((d) => h('tr', {}, h('td', {}, addr(d.delegator)), h('td', {}, cby(d.amount)), h('td', {}, d.since)))));
  const ev = await eventsAll('emitter=0x0000000000000000000000000000000000000001', 2000);
  const mine = ev.filter((e) => JSON.stringify(e.decoded || {}).toLowerCase().includes(a.toLowerCase())).slice(-LIST_LIMIT).reverse();
  main.append(h('h2', {}, 'Registry events'), eventsTable(mine));
}

async function pageRelays(main) {
  const rs = await api('/relays?all=true');
  main.append(h('h1', {}, 'Relays'));
  main.append(table(['Relay', 'Address', 'Status', 'Health', 'Stake', 'Used / capacity', 'Challenges (ok/failed/missed)', 'Reputation', 'Earned'], rs.map((r) => {
    const c = r.challenges || {};
    return h('tr', { 'data-relay': r.id }, h('td', {}, link('relay', r.id)), h('td', {}, h('code', {}, r.addr)), h('td', {}, statusPill(r.status)),
      h('td', {}, r.healthy ? pill('healthy', 'ok') : pill('unhealthy', 'bad')), h('td', {}, cby(r.stake)),
      h('td', {}, num(r.used), ' / ', num(r.capacity)), h('td', { 'data-field': 'challenges' }, (c.answered || 0) + ' / ' + (c.failed || 0) + ' / ' + (c.missed || 0)),
      h('td', {}, c.reputation !== undefined ? c.reputation : '—'), h('td', {}, cby(c.earned)));
  }), { id: 'relay-list' }));
}

async function pageRelay(main, id) {
  const [r, ch] = await Promise.all([api('/relays/' + id), apiOrNull('/relays/' + id + '/challenges')]);
  const c = r.challenges || {};
  main.append(h('h1', {}, 'Relay ', h('span', { class: 'mono' }, short(id))));
  main.append(kv([
    ['Id', h('span', { class: 'mono' }, r.id)], ['Address', h('code', {}, r.addr)], ['Status', statusPill(r.status)],
    ['Healthy', r.healthy ? pill('yes', 'ok') : pill('no', 'bad')], ['Stake', cby(r.stake)], ['Capacity', num(r.capacity)], ['Used', num(r.used)],
    ['Registered / last heartbeat', r.registered_at + ' / ' + r.last_heartbeat],
    ['Challenges answered / failed / missed', (c.answered || 0) + ' / ' + (c.failed || 0) + ' / ' + (c.missed || 0), 'challenges'],
    ['Reputation', c.reputation !== undefined ? c.reputation : '—'], ['Earned', cby(c.earned)], ['Slashed', cby(c.slashed)],
    ['Flagged', c.flagged ? pill('flagged until epoch ' + c.flagged_until_epoch, 'bad') : 'no'],
  ]));
  const list = (ch && ch.challenges) || [];
  main.append(h('h2', {}, 'Challenges on record (' + list.length + ')'), table(['Volume', 'Epoch', 'Version', 'Deadline', 'Rent', 'Status'], list.map((x) => h('tr', {},
    h('td', {}, link('volume', x.volume)), h('td', {}, x.epoch), h('td', {}, x.version), h('td', {}, x.deadline), h('td', {}, cby(x.rent)), h('td', {}, statusPill(x.status))))));
}

async function pageVolumes(main) {
  main.append(h('h1', {}, 'Volumes'));
  const evs = (await eventsAll('emitter=' + SYS.storage + '&topic=VolumeCreated')).reverse().slice(0, LIST_LIMIT);
  const vols = await Promise.all(evs.map((e) => apiOrNull('/volumes/' + (e.decoded && e.decoded.volume))));
  main.append(table(['Volume', 'Owner', 'K+M', 'Version', 'Size', 'Relays', 'Escrow', 'Updated'], vols.filter(Boolean).map((v) => h('tr', { 'data-volume': v.id },
    h('td', {}, link('volume', v.id)), h('td', {}, addr(v.owner)), h('td', {}, v.k + '+' + v.m), h('td', { 'data-field': 'version' }, v.version),
    h('td', {}, num(v.size)), h('td', {}, (v.placement || []).length), h('td', {}, cby(v.rent && v.rent.escrow)),
    h('td', {}, link('block', v.updated_at, String(v.updated_at))))), { id: 'volume-list' }));
}

async function pageVolume(main, id) {
  const v = await api('/volumes/' + id);
  main.append(h('h1', {}, 'Volume ', h('span', { class: 'mono' }, short(v.id))));
  const rent = v.rent || {};
  main.append(kv([
    ['Id', h('span', { class: 'mono' }, v.id), 'id'], ['Owner', addr(v.owner)], ['Erasure code', v.k + ' data + ' + v.m + ' parity'],
    ['Anchored root', h('span', { class: 'mono' }, v.root), 'root'], ['Version', v.version, 'version'], ['Size', num(v.size), 'size'],
    ['Created / updated', v.created_at + ' / ' + v.updated_at],
    ['Rent escrow', cby(rent.escrow)], ['Rent per epoch', cby(rent.rent_per_epoch)], ['Arrears', cby(rent.arrears)],
    ['Evicted', rent.evicted ? pill('evicted', 'bad') : 'no'],
  ]));
  main.append(h('h2', {}, 'Placement'), table(['Relay', 'Version', 'Bytes', 'Shards', 'Shards root', 'Latest challenge'], (v.placement || []).map((p) => h('tr', {},
    h('td', {}, link('relay', p.relay)), h('td', {}, p.version), h('td', {}, num(p.bytes)), h('td', {}, p.count),
    h('td', {}, h('code', {}, short(p.shards_root))), h('td', {}, p.challenge ? statusPill(p.challenge.status) : '—'))), { id: 'placement' }));
  const commits = (await eventsAll('emitter=' + SYS.storage + '&topic=StorageCommitment', 5000))
    .filter((e) => e.decoded && String(e.decoded.volume).toLowerCase() === v.id.toLowerCase()).reverse().slice(0, LIST_LIMIT);
  main.append(h('h2', {}, 'Anchored roots'), table(['Version', 'Root', 'Size', 'Relays', 'Block'], commits.map((e) => h('tr', {},
    h('td', {}, e.decoded.version), h('td', {}, h('code', {}, short(e.decoded.root))), h('td', {}, num(e.decoded.size)), h('td', {}, e.decoded.relays),
    h('td', {}, link('block', e.height, String(e.height))))), { id: 'anchors' }));
}

async function pageValidators(main) {
  const [vs, st] = await Promise.all([api('/validators'), api('/status')]);
  main.append(h('h1', {}, 'Validators'));
  main.append(h('div', { class: 'cards' },
    card('Finalized height', num(st.finalized_height), 'finalized_height'), card('Committed (QC)', num(st.committed_height), 'committed_height'),
    card('Epoch', num(vs.epoch), 'epoch'), card('Set size', num(vs.members.length), 'set_size'),
    st.consensus ? card('Round', num(st.consensus.round), 'round') : null, st.consensus ? card('Peers heard', num(st.consensus.peers), 'peers') : null));
  if (!vs.members.length) {
    main.append(h('p', { class: 'muted', id: 'single' }, 'A single-validator devnet: blocks are final as soon as they are produced.'));
    return;
  }
  const recs = new Map(vs.validators.map((r) => [r.address, r]));
  main.append(h('h2', {}, 'Consensus set, epoch ' + vs.epoch + ' (from height ' + vs.start_height + ')'),
    table(['#', 'Validator', 'Weight', 'Stake', 'Status', 'Missed'], vs.members.map((m) => {
      const r = recs.get(m.address) || {};
      return h('tr', { 'data-validator': m.address }, h('td', {}, m.index), h('td', {}, addr(m.address)), h('td', {}, num(m.weight)),
        h('td', {}, cby(r.stake)), h('td', {}, r.jailed ? pill('jailed', 'bad') : statusPill(r.status || 'active')), h('td', {}, r.missed || 0));
    }), { id: 'validator-set' }));
  const others = vs.validators.filter((r) => !vs.members.some((m) => m.address === r.address));
  if (others.length) main.append(h('h2', {}, 'Other registered validators'), table(['Validator', 'Stake', 'Status'], others.map((r) => h('tr', {}, h('td', {}, addr(r.address)), h('td', {}, cby(r.stake)), h('td', {}, statusPill(r.status))))));
  onBlock(async () => {
    try {
      const s = await api('/status');
      const set = (f, v) => { const el = main.querySelector('[data-field="' + f + '"]'); if (el) el.replaceChildren(num(v)); };
      set('finalized_height', s.finalized_height); set('committed_height', s.committed_height);
    } catch (_) { /* keep */ }
  });
}

// ---------- search and routing ----------

async function search(q) {
  q = q.trim();
  if (/^\d+$/.test(q)) return '#/block/' + q;
  if (/^0x[0-9a-fA-F]{40}$/.test(q)) {
    if (await apiOrNull('/relays/' + q)) return '#/relay/' + q;
    if (await apiOrNull('/runners/' + q)) return '#/runner/' + q;
    return '#/account/' + q;
  }
  if (/^0x[0-9a-fA-F]{64}$/.test(q)) {
    if (await apiOrNull('/txs/' + q)) return '#/tx/' + q;
    if (await apiOrNull('/jobs/' + q)) return '#/job/' + q;
    if (await apiOrNull('/volumes/' + q)) return '#/volume/' + q;
    return '#/block/' + q;
  }
  return null;
}

const routes = [
  [/^#?\/?$/, pageChain, 'Chain'], [/^#\/blocks/, pageBlocks, 'Blocks'], [/^#\/block\/([^/?]+)/, pageBlock, 'Blocks'],
  [/^#\/tx\/(0x[0-9a-fA-F]+)/, pageTx, 'Blocks'], [/^#\/account\/(0x[0-9a-fA-F]{40})/, pageAccount, ''],
  [/^#\/jobs/, pageJobs, 'Jobs'], [/^#\/job\/(0x[0-9a-fA-F]+)/, pageJob, 'Jobs'],
  [/^#\/runners/, pageRunners, 'Runners'], [/^#\/runner\/(0x[0-9a-fA-F]{40})/, pageRunner, 'Runners'],
  [/^#\/relays/, pageRelays, 'Relays'], [/^#\/relay\/(0x[0-9a-fA-F]{40})/, pageRelay, 'Relays'],
  [/^#\/volumes/, pageVolumes, 'Volumes'], [/^#\/volume\/(0x[0-9a-fA-F]+)/, pageVolume, 'Volumes'],
  [/^#\/validators/, pageValidators, 'Validators'],
];

// softRefresh re-renders the current page for a new block, at most every
// two seconds and never over a render still loading: on a busy chain a
// block arrives faster than a page with many API calls loads.
let loading = 0;
let lastRender = 0;
function softRefresh() {
  if (loading > 0 || Date.now() - lastRender < 2000) return;
  route();
}

let generation = 0;
async function route() {
  loading++;
  try { await render(); } finally { loading--; lastRender = Date.now(); }
}

async function render() {
  const gen = ++generation;
  live.listeners.clear();
  const hash = location.hash || '#/';
  const main = document.getElementById('main');
  const page = h('div', { id: 'page' });
  for (const [re, fn, nav] of routes) {
    const m = hash.match(re);
    if (!m) continue;
    for (const a of document.querySelectorAll('header nav a')) a.classList.toggle('active', a.textContent === nav);
    try {
      await fn(page, ...m.slice(1));
    } catch (e) {
      page.replaceChildren(h('div', { class: 'err', id: 'error' }, (e.code ? e.code + ': ' : '') + e.message));
    }
    if (gen !== generation) return; // a newer navigation won
    page.setAttribute('data-loaded', 'true');
    main.replaceChildren(page);
    return;
  }
  main.replaceChildren(h('div', { class: 'err', id: 'error' }, 'no such page: ' + hash));
}

document.getElementById('search').addEventListener('submit', async (ev) => {
  ev.preventDefault();
  const q = document.getElementById('q');
  const to = await search(q.value);
  if (to) { location.hash = to; q.value = ''; } else q.setCustomValidity('not a height, hash or address');
  q.reportValidity();
});
document.getElementById('q').addEventListener('input', (ev) => ev.target.setCustomValidity(''));
window.addEventListener('hashchange', route);
// A page left open in the back-forward cache would keep its stream's
// connection, and browsers allow only six per host over HTTP/1.1.
window.addEventListener('pagehide', () => { if (live.source) live.source.close(); });
window.addEventListener('pageshow', (ev) => { if (ev.persisted) startStream(); });
startStream();
route();

// strata's admin dashboard: polls /dashboard/data every second with the admin secret and draws
// hand-made SVG charts. Everything the server sends is put in the page as text, never as HTML
// (opaque ids and room names come from clients).
'use strict';

const HISTORY = 60; // points kept per chart: one minute at one snapshot a second
const SECRET_KEY = 'strata-admin-secret';
const SVG = 'http://www.w3.org/2000/svg';
const W = 400, H = 100;

const pcs = new Map(); // handle id -> {card, history}
let timer = null;

function $(id) { return document.getElementById(id); }

// A secret given in the URL's fragment (#secret=...) is kept for the tab and taken out of the URL.
function secretFromHash() {
  const m = /(?:^#|&)secret=([^&]*)/.exec(location.hash);
  if (m) {
    sessionStorage.setItem(SECRET_KEY, decodeURIComponent(m[1]));
    history.replaceState(null, '', location.pathname);
  }
}

function showLogin(msg) {
  if (timer) { clearInterval(timer); timer = null; }
  $('login').hidden = false;
  $('main').hidden = true;
  $('login-error').textContent = msg || '';
}

function start() {
  $('login').hidden = true;
  $('main').hidden = false;
  poll();
  timer = setInterval(poll, 1000);
}

async function poll() {
  const secret = sessionStorage.getItem(SECRET_KEY);
  if (!secret) { showLogin(); return; }
  let resp;
  try {
    resp = await fetch('/dashboard/data', { headers: { Authorization: 'Bearer ' + secret }, cache: 'no-store' });
  } catch (e) {
    setStatus('unreachable: ' + e.message, true);
    return;
  }
  if (resp.status === 401 || resp.status === 403) {
    sessionStorage.removeItem(SECRET_KEY);
    showLogin((await resp.text()).trim());
    return;
  }
  if (!resp.ok) { setStatus('error ' + resp.status, true); return; }
  render(await resp.json());
}

function setStatus(text, stale) {
  $('status').textContent = text;
  $('status').className = stale ? 'stale' : '';
}

function render(s) {
  const list = s.peer_connections || [];
  setStatus('updated ' + new Date(s.time).toLocaleTimeString(), false);
  $('summary').textContent = `${s.session_count} sessions, ${s.peer_connection_count} PeerConnections` +
    (s.peer_connection_count > list.length ? ` (the ${list.length} busiest shown)` : '');
  fillTable('plugins', s.plugins, p => [p.name, p.handles, p.rooms, p.participants, p.publishers, p.subscribers]);
  fillTable('sessions', s.sessions, x => [x.id, x.transport, x.handles]);
  renderNetctl(s.netctl);
  renderPCs(list);
}

function fillTable(id, rows, cells) {
  const body = $(id).tBodies[0];
  body.replaceChildren(...(rows || []).map(r => {
    const tr = document.createElement('tr');
    for (const c of cells(r)) {
      const td = document.createElement('td');
      td.textContent = String(c);
      tr.appendChild(td);
    }
    return tr;
  }));
}

function renderNetctl(n) {
  $('netctl-section').hidden = !n;
  if (!n) return;
  $('netctl-summary').textContent = `${n.url} (node ${n.node}, enforcement ${n.enforcement || 'sfu'}): ` +
    `${n.connected ? 'connected' : 'not connected, layers follow the estimate'}; ${n.streams} streams, ` +
    `${n.subscriptions} subscriptions, ${n.fallbacks} outages`;
  fillTable('netctl', n.decisions, d => [d.subscription, d.layers, d.enforced ? 'yes' : 'no']);
}

function renderPCs(list) {
  const seen = new Set();
  for (const pc of list) {
    seen.add(pc.handle_id);
    let e = pcs.get(pc.handle_id);
    if (!e) {
      e = newCard(pc);
      pcs.set(pc.handle_id, e);
      $('pcs').appendChild(e.card);
    }
    push(e.history, pc);
    updateCard(e, pc);
  }
  for (const [id, e] of pcs) {
    if (!seen.has(id)) { e.card.remove(); pcs.delete(id); }
  }
}

function newCard(pc) {
  const card = document.createElement('div');
  card.className = 'pc';
  card.dataset.handle = String(pc.handle_id);
  const h = document.createElement('h3');
  h.textContent = `${pc.plugin} — session ${pc.session_id}, handle ${pc.handle_id}` + (pc.opaque_id ? ` (${pc.opaque_id})` : '');
  const text = document.createElement('p');
  const layers = document.createElement('p');
  const rates = chart('bitrate', ['in', 'out', 'est']);
  const path = chart('path', ['rtt', 'loss']);
  card.append(h, text, layers, rates.svg, path.svg);
  return { card, text, layers, rates, path, history: { in: [], out: [], est: [], rtt: [], loss: [] } };
}

// chart makes an SVG with one path per series and a label for its scale.
function chart(name, series) {
  const svg = document.createElementNS(SVG, 'svg');
  svg.setAttribute('class', 'chart');
  svg.setAttribute('data-chart', name);
  svg.setAttribute('viewBox', `0 0 ${W} ${H}`);
  svg.setAttribute('preserveAspectRatio', 'none');
  const paths = {};
  for (const s of series) {
    const p = document.createElementNS(SVG, 'path');
    p.setAttribute('class', s);
    p.setAttribute('data-series', s);
    svg.appendChild(p);
    paths[s] = p;
  }
  const label = document.createElementNS(SVG, 'text');
  label.setAttribute('x', '4');
  label.setAttribute('y', '12');
  svg.appendChild(label);
  return { svg, paths, label };
}

function push(h, pc) {
  const add = (k, v) => { h[k].push(v); if (h[k].length > HISTORY) h[k].shift(); };
  add('in', pc.bitrate_in_bps);
  add('out', pc.bitrate_out_bps);
  add('est', pc.estimate_bps);
  add('rtt', pc.rtt_ms);
  add('loss', pc.feedback_loss >= 0 ? pc.feedback_loss * 100 : 0);
}

function updateCard(e, pc) {
  e.text.textContent = `in ${kbps(pc.bitrate_in_bps)}, out ${kbps(pc.bitrate_out_bps)}, estimate ${kbps(pc.estimate_bps)}, ` +
    `RTT ${pc.rtt_ms.toFixed(1)} ms, loss ${pc.feedback_loss >= 0 ? (pc.feedback_loss * 100).toFixed(1) + ' %' : '?'}, ` +
    `reported lost ${pc.reported_lost}, NACKed ${pc.nacked_in}/${pc.nacked_out}`;
  e.layers.textContent = (pc.layers || []).map(l => `mid ${l.mid}: ${l.current} → ${l.target}`).join('; ');
  draw(e.rates, e.history, ['in', 'out', 'est'], v => kbps(v));
  draw(e.path, e.history, ['rtt', 'loss'], v => v.toFixed(0) + ' ms / %');
}

// draw scales every series of a chart to the largest value shown and writes each as a path.
function draw(c, h, series, fmt) {
  let top = 0;
  for (const s of series) for (const v of h[s]) top = Math.max(top, v);
  top = top > 0 ? top * 1.1 : 1;
  for (const s of series) {
    const pts = h[s].map((v, i) => {
      const x = (W * i) / (HISTORY - 1);
      const y = H - (H * v) / top;
      return (i ? 'L' : 'M') + x.toFixed(1) + ' ' + y.toFixed(1);
    });
    c.paths[s].setAttribute('d', pts.join(' '));
  }
  c.label.textContent = 'max ' + fmt(top);
}

function kbps(bps) { return (bps / 1000).toFixed(0) + ' kbit/s'; }

document.addEventListener('DOMContentLoaded', () => {
  secretFromHash();
  $('login').addEventListener('submit', ev => {
    ev.preventDefault();
    sessionStorage.setItem(SECRET_KEY, $('secret').value);
    $('secret').value = '';
    start();
  });
  if (sessionStorage.getItem(SECRET_KEY)) start(); else showLogin();
});

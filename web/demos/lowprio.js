// The low-priority transfer demo: an echotest call (camera and microphone to
// janus.plugin.echotest and back) and, on the same PeerConnection, a LEDBAT transfer to or from
// the server (lib/lowprio.js), with the video's bitrate and the path's delay charted beside the
// transfer's rate and queuing delay. State is exposed on window.strataDemo for people and tests:
//   state      "idle" | "connecting" | "negotiating" | "connected" | "up" | "stopping" | "error"
//   samples    [{time, videoInKbps, videoOutKbps, rttMs, transferKbps, queueDelayMs}] once a second
//   transfer   {name, verb, state, progress, result, error} of the latest transfer, or null
//   events     [{name, detail, time}]
//   pc         the RTCPeerConnection while a call runs

import { connect, startCall, StatsSampler, resolveServer } from '../lib/strata.js';
import * as lowprio from '../lib/lowprio.js';
import { eventLog } from './eventlog.js';
import { drawChart } from './chart.js';

const PLUGIN = 'janus.plugin.echotest';
const HISTORY = 120;
const $ = (id) => document.getElementById(id);

const demo = {
  state: 'idle',
  samples: [],
  transfer: null,
  events: [],
  error: null,
  session: null,
  handle: null,
  call: null,
  sampler: null,
  current: null, // the running lowprio.Transfer
  get pc() {
    return this.call?.pc ?? null;
  },
};
window.strataDemo = demo;
window.lowprioModule = lowprio; // for people and tests at the console
const logEvent = eventLog(demo.events, $('events'), 40);

function setState(state, text = state) {
  demo.state = state;
  $('status').dataset.state = state;
  $('status').textContent = text;
  $('start').textContent = state === 'idle' || state === 'error' ? 'Start call' : 'Stop';
  $('start').disabled = ['connecting', 'negotiating', 'stopping'].includes(state);
  $('transfer').disabled = !['connected', 'up'].includes(state);
}

async function start() {
  demo.error = null;
  setState('connecting', 'connecting…');
  try {
    lowprio.load().catch((err) => logEvent('error', String(err.message ?? err))); // fetch the module meanwhile
    const { url } = await resolveServer();
    demo.session = await connect(url);
    demo.session.on('disconnected', (err) => fail(err ?? new Error('lost the connection to the server')));
    demo.handle = await demo.session.attach(PLUGIN, { opaqueId: `lowprio-${crypto.randomUUID().slice(0, 8)}` });
    demo.handle.on('webrtcup', () => {
      logEvent('webrtcup', 'PeerConnection is up');
      setState('up', 'webrtcup · media flowing');
    });
    demo.handle.on('hangup', (m) => {
      logEvent('hangup', m.reason ?? '');
      if (demo.state !== 'stopping') stop();
    });
    setState('negotiating', 'negotiating…');
    demo.call = await startCall(demo.handle, {
      body: { audio: true, video: true },
      // A data section in the offer: the transfers' channels open on it later, without renegotiating.
      prepare: (pc) => pc.createDataChannel('strata-demo'),
    });
    $('local').srcObject = demo.call.localStream;
    $('remote').srcObject = demo.call.remoteStream;
    if (demo.state === 'negotiating') setState('connected', 'waiting for media…');
    demo.sampler = new StatsSampler(demo.call.pc, { onSample: onStats });
    demo.sampler.start();
  } catch (err) {
    fail(err);
  }
}

/** Starts the transfer the toolbar describes. */
async function transfer() {
  const pc = demo.pc;
  if (!pc) return;
  demo.current?.abort('replaced by a new transfer');
  const verb = $('direction').value;
  let name = $('what').value;
  let source = null;
  if (name === 'file') {
    const file = $('file').files[0];
    if (!file) return $('file').click();
    if (verb === 'put') source = file;
    else return logEvent('error', 'a file can only be uploaded; download a generated stream');
    name = file.name.replace(/^\/+/, '').replaceAll('..', '_') || 'file';
  }
  const opts = { variant: $('variant').value };
  try {
    const t = verb === 'get' ? await lowprio.get(pc, name, opts) : await lowprio.put(pc, name, source, opts);
    watchTransfer(t);
  } catch (err) {
    logEvent('error', String(err.message ?? err));
  }
}

function watchTransfer(t) {
  demo.current = t;
  const rec = { name: t.name, verb: t.verb, state: 'running', progress: null, result: null, error: null, lastBytes: 0 };
  demo.transfer = rec;
  logEvent('transfer', `${t.verb} ${t.name}`);
  t.on('progress', (p) => {
    rec.progress = p;
    const pct = p.total ? ` · ${Math.floor((100 * p.bytes) / p.total)} %` : '';
    $('transfer-info').textContent = `${t.verb} ${t.name}: ${(p.bytes / 1e6).toFixed(1)} MB${pct}`;
  });
  t.finished.then(
    (r) => {
      Object.assign(rec, { state: 'done', result: r });
      const check = r.verified != null ? ', every byte checked' : '';
      logEvent('done', `${t.name}: ${(r.bytes / 1e6).toFixed(1)} MB in ${(r.elapsedMs / 1000).toFixed(1)} s${check}`);
    },
    (err) => {
      Object.assign(rec, { state: 'error', error: String(err.message ?? err) });
      logEvent('error', `${t.name}: ${rec.error}`);
    },
  );
}

/** One sample a second: the call's stats, and the transfer's rate and delay over the same second. */
function onStats(s) {
  const rec = demo.transfer;
  const p = rec?.progress;
  let transferKbps = null;
  if (p && rec.state === 'running') {
    transferKbps = (Math.max(0, p.bytes - rec.lastBytes) * 8) / 1000 / (demo.sampler.intervalMs / 1000);
    rec.lastBytes = p.bytes;
  }
  const sample = {
    time: s.time,
    videoInKbps: s.videos.reduce((sum, v) => sum + v.bitrateKbps, 0),
    videoOutKbps: s.bitrateOutKbps,
    rttMs: s.rttMs,
    transferKbps,
    queueDelayMs: transferKbps != null ? p.queueDelayMs : null,
  };
  demo.samples.push(sample);
  if (demo.samples.length > HISTORY) demo.samples.shift();
  $('v-in').textContent = `${Math.round(sample.videoInKbps)} kbit/s`;
  $('v-out').textContent = `${Math.round(sample.videoOutKbps)} kbit/s`;
  $('v-rtt').textContent = s.rttMs == null ? '–' : `${Math.round(s.rttMs)} ms`;
  $('v-rate').textContent = transferKbps == null ? '–' : `${Math.round(transferKbps)} kbit/s`;
  $('v-queue').textContent = sample.queueDelayMs == null ? '–' : `${Math.round(sample.queueDelayMs)} ms`;
  $('remote-info').textContent = s.frameWidth ? `${s.frameWidth}×${s.frameHeight} · ${Math.round(s.framesPerSecond)} fps` : '';
  drawCharts();
}

function drawCharts() {
  const css = getComputedStyle(document.documentElement);
  const color = (name) => css.getPropertyValue(name).trim();
  const col = (f) => demo.samples.map(f);
  drawChart($('chart-video'), [
    { color: color('--in'), values: col((s) => s.videoInKbps) },
    { color: color('--out'), values: col((s) => s.videoOutKbps), dash: [5, 4] },
  ], { minMax: 100 });
  drawChart($('chart-transfer'), [{ color: color('--accent'), values: col((s) => s.transferKbps) }], { minMax: 100 });
  drawChart($('chart-delay'), [
    { color: color('--rtt'), values: col((s) => s.rttMs) },
    { color: color('--loss'), values: col((s) => s.queueDelayMs), dash: [5, 4] },
  ], { unit: 'ms', minMax: 10 });
}

async function stop() {
  setState('stopping', 'stopping…');
  demo.current?.abort('the call ended');
  demo.sampler?.stop();
  const { call, handle, session } = demo;
  Object.assign(demo, { call: null, handle: null, session: null, sampler: null, current: null });
  await call?.hangup().catch(() => {});
  await handle?.detach().catch(() => {});
  await session?.destroy().catch(() => {});
  $('local').srcObject = null;
  $('remote').srcObject = null;
  setState('idle');
}

function fail(err) {
  console.error('lowprio demo:', err);
  demo.error = String(err?.message ?? err);
  logEvent('error', demo.error);
  demo.sampler?.stop();
  demo.call?.close();
  demo.session?.destroy().catch(() => {});
  Object.assign(demo, { call: null, handle: null, session: null, sampler: null, current: null });
  setState('error', `error: ${demo.error}`);
}

$('start').addEventListener('click', () => (demo.state === 'idle' || demo.state === 'error' ? start() : stop()));
$('transfer').addEventListener('click', transfer);
$('what').addEventListener('change', (e) => e.target.value === 'file' && $('file').click());
$('file').addEventListener('change', () => {
  const f = $('file').files[0];
  if (f) $('transfer-info').textContent = `${f.name} (${(f.size / 1e6).toFixed(1)} MB)`;
});
window.addEventListener('pagehide', () => demo.session?.destroy().catch(() => {}));
drawCharts();
resolveServer().then(({ url, transport }) => {
  $('server').textContent = `${transport === 'ws' ? 'WebSocket' : 'HTTP long-poll'} · ${url}`;
});

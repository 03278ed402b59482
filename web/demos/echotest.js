// The echotest demo: send the camera and microphone to janus.plugin.echotest and watch them come
// back, with live stats. State is exposed on window.strataDemo for people and for tests:
//   state      "idle" | "connecting" | "negotiating" | "connected" | "up" | "stopping" | "error"
//   lastStats  the latest StatsSample (see lib/stats.js)
//   events     [{name, detail, time}] in arrival order (webrtcup, media, slowlink, hangup, ...)
//   pc         the RTCPeerConnection while a call runs

import { connect, startCall, StatsSampler, resolveServer } from '../lib/strata.js';
import { eventLog } from './eventlog.js';
import { drawChart } from './chart.js';

const PLUGIN = 'janus.plugin.echotest';
const $ = (id) => document.getElementById(id);

const demo = {
  state: 'idle',
  lastStats: null,
  events: [],
  error: null,
  server: null,
  transport: null,
  session: null,
  handle: null,
  call: null,
  sampler: null,
  get pc() {
    return this.call?.pc ?? null;
  },
};
window.strataDemo = demo;

function setState(state, text = state) {
  demo.state = state;
  $('status').dataset.state = state;
  $('status').textContent = text;
  $('start').textContent = state === 'idle' || state === 'error' ? 'Start' : 'Stop';
  $('start').disabled = ['connecting', 'negotiating', 'stopping'].includes(state);
}

const logEvent = eventLog(demo.events, $('events'), 40);

function requestBody() {
  const body = { audio: $('audio').checked, video: $('video').checked };
  const bitrate = Number($('bitrate').value);
  if (bitrate > 0) body.bitrate = bitrate;
  return body;
}

async function start() {
  demo.error = null;
  setState('connecting', 'connecting…');
  try {
    const { url, transport } = await resolveServer();
    Object.assign(demo, { server: url, transport });
    $('server').textContent = `${transport === 'ws' ? 'WebSocket' : 'HTTP long-poll'} · ${url}`;
    demo.session = await connect(url);
    watchSession(demo.session);
    demo.handle = await demo.session.attach(PLUGIN, { opaqueId: `echotest-${crypto.randomUUID().slice(0, 8)}` });
    watchHandle(demo.handle);
    setState('negotiating', 'negotiating…');
    demo.call = await startCall(demo.handle, { body: requestBody(), onTrack: showRemote });
    $('local').srcObject = demo.call.localStream;
    $('remote').srcObject = demo.call.remoteStream;
    if (demo.state === 'negotiating') setState('connected', 'waiting for media…');
    startStats(demo.call.pc);
  } catch (err) {
    fail(err);
  }
}

function watchSession(session) {
  session.on('timeout', () => fail(new Error('the server timed the session out')));
  session.on('disconnected', (err) => fail(err ?? new Error('lost the connection to the server')));
}

function watchHandle(handle) {
  handle.on('webrtcup', () => {
    logEvent('webrtcup', 'PeerConnection is up');
    setState('up', 'webrtcup · media flowing');
  });
  handle.on('media', (m) => logEvent('media', `${m.type} ${m.receiving ? 'receiving' : 'not receiving'}`));
  handle.on('slowlink', (m) => logEvent('slowlink', `${m.media ?? ''} ${m.uplink ? 'uplink' : 'downlink'}, lost ${m.lost}`));
  handle.on('hangup', (m) => {
    logEvent('hangup', m.reason ?? '');
    if (demo.state !== 'stopping') stop();
  });
  handle.on('event', (e) => logEvent('event', JSON.stringify(e.data)));
}

function showRemote(track) {
  $('remote').srcObject = demo.call?.remoteStream ?? new MediaStream([track]);
}

function startStats(pc) {
  demo.sampler = new StatsSampler(pc, {
    onSample: (s, all) => {
      demo.lastStats = s;
      renderStats(s, all);
    },
  });
  demo.sampler.start();
}

function renderStats(s, all) {
  $('v-out').textContent = `${Math.round(s.bitrateOutKbps)} kbit/s`;
  $('v-in').textContent = `${Math.round(s.bitrateInKbps)} kbit/s`;
  $('v-rtt').textContent = formatRTT(s.rttMs);
  $('v-loss').textContent = `${s.lossPercent.toFixed(1)} %`;
  $('remote-info').textContent = s.frameWidth ? `${s.frameWidth}×${s.frameHeight} · ${Math.round(s.framesPerSecond)} fps` : '';
  const local = demo.call?.localStream.getVideoTracks()[0]?.getSettings();
  $('local-info').textContent = local?.width ? `${local.width}×${local.height}` : '';
  drawCharts(all);
}

// Browsers report RTT in whole milliseconds, so on a LAN it often reads 0.
function formatRTT(ms) {
  if (ms == null) return '–';
  return ms < 1 ? '< 1 ms' : `${Math.round(ms)} ms`;
}

function drawCharts(all) {
  const css = getComputedStyle(document.documentElement);
  const color = (name) => css.getPropertyValue(name).trim();
  drawChart($('chart-bitrate'), [
    { color: color('--in'), values: all.map((s) => s.bitrateInKbps) },
    { color: color('--out'), values: all.map((s) => s.bitrateOutKbps), dash: [5, 4] },
  ], { minMax: 100 });
  drawChart($('chart-rtt'), [{ color: color('--rtt'), values: all.map((s) => s.rttMs) }], { unit: 'ms', minMax: 5 });
  drawChart($('chart-loss'), [{ color: color('--loss'), values: all.map((s) => s.lossPercent) }], { unit: '%', minMax: 5 });
}

async function stop() {
  setState('stopping', 'stopping…');
  demo.sampler?.stop();
  const { call, handle, session } = demo;
  Object.assign(demo, { call: null, handle: null, session: null, sampler: null });
  // Each step is best effort: the server may already have dropped the session.
  await call?.hangup().catch(() => {});
  await handle?.detach().catch(() => {});
  await session?.destroy().catch(() => {});
  $('local').srcObject = null;
  $('remote').srcObject = null;
  setState('idle');
}

function fail(err) {
  console.error('echotest:', err);
  demo.error = String(err?.message ?? err);
  logEvent('error', demo.error);
  const { call, session } = demo;
  demo.sampler?.stop();
  call?.close();
  session?.destroy().catch(() => {});
  Object.assign(demo, { call: null, handle: null, session: null, sampler: null });
  setState('error', `error: ${demo.error}`);
}

/** Sends one setting change to the plugin during a call. */
async function configure(body) {
  if (!demo.handle) return;
  try {
    await demo.handle.message(body);
    logEvent('configure', JSON.stringify(body));
  } catch (err) {
    logEvent('error', String(err.message ?? err));
  }
}

$('start').addEventListener('click', () => (demo.state === 'idle' || demo.state === 'error' ? start() : stop()));
$('audio').addEventListener('change', (e) => configure({ audio: e.target.checked }));
$('video').addEventListener('change', (e) => configure({ video: e.target.checked }));
$('bitrate').addEventListener('change', (e) => configure({ bitrate: Number(e.target.value) }));
window.addEventListener('pagehide', () => demo.session?.destroy().catch(() => {}));
drawCharts([]);
resolveServer().then(({ url, transport }) => {
  $('server').textContent = `${transport === 'ws' ? 'WebSocket' : 'HTTP long-poll'} · ${url}`;
});

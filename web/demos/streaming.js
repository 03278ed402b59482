// The streaming demo: list janus.plugin.streaming's mountpoints, watch one, switch to another on the
// same PeerConnection, and pick the simulcast layer, with what is received shown live. It captures
// nothing, so it needs no secure context. State is exposed on window.strataDemo for people and tests:
//   state        "idle" | "connecting" | "ready" (listed, not watching) | "negotiating" | "watching"
//                (answer sent) | "up" (media flowing) | "stopping" | "error"
//   mountpoints  the list reply's entries; selected, the id picked in the list
//   watching     the mountpoint id the viewer receives, or null
//   info         the info reply of the watched mountpoint
//   layers       {mid: {substream, temporal, ...}} as the plugin's events report them
//   lastStats    the latest StatsSample (lib/stats.js), with videos[] per mid
//   events       [{name, detail, time}]; viewer, pc, the StreamViewer and its RTCPeerConnection

import { connect, StatsSampler, resolveServer, StreamViewer, listMountpoints, JanusError } from '../lib/strata.js';
import { eventLog } from './eventlog.js';
import { drawChart } from './chart.js';

const PLUGIN = 'janus.plugin.streaming';
const $ = (id) => document.getElementById(id);

const demo = {
  state: 'idle',
  mountpoints: [],
  selected: null,
  watching: null,
  webrtcUp: false,
  info: null,
  layers: {},
  lastStats: null,
  events: [],
  error: null,
  server: null,
  transport: null,
  session: null,
  handle: null,
  viewer: null,
  sampler: null,
  get pc() {
    return this.viewer?.pc ?? null;
  },
};
window.strataDemo = demo;

const logEvent = eventLog(demo.events, $('events'), 60);

function setState(state, text = state) {
  demo.state = state;
  $('status').dataset.state = ['watching', 'ready'].includes(state) ? 'connected' : state;
  $('status').textContent = text;
  $('start').textContent = state === 'idle' || state === 'error' ? 'Start' : 'Disconnect';
  $('start').disabled = ['connecting', 'stopping'].includes(state);
  renderButtons();
}

const busy = () => ['connecting', 'negotiating', 'stopping'].includes(demo.state);
const connected = () => demo.handle !== null && !['idle', 'error', 'connecting', 'stopping'].includes(demo.state);

function renderButtons() {
  $('mountpoints').disabled = !connected();
  $('refresh').disabled = !connected() || busy();
  const selected = demo.selected;
  const watching = demo.watching !== null;
  $('watch').textContent = watching ? (selected === demo.watching ? 'Watching' : 'Switch') : 'Watch';
  $('watch').disabled = !connected() || busy() || selected === null || selected === demo.watching;
  $('stop').disabled = !watching || busy();
}

async function start() {
  demo.error = null;
  setState('connecting', 'connecting…');
  try {
    const { url, transport } = await resolveServer();
    Object.assign(demo, { server: url, transport });
    showServer(url, transport);
    demo.session = await connect(url);
    demo.session.on('timeout', () => fail(new Error('the server timed the session out')));
    demo.session.on('disconnected', (err) => fail(err ?? new Error('lost the connection to the server')));
    demo.handle = await attachHandle();
    setState('ready', 'connected');
    await refreshList();
  } catch (err) {
    fail(err);
  }
}

/** Attaches a streaming handle and follows its events. */
async function attachHandle() {
  const handle = await demo.session.attach(PLUGIN, { opaqueId: `streaming-${crypto.randomUUID().slice(0, 8)}` });
  watchHandle(handle);
  return handle;
}

function watchHandle(handle) {
  handle.on('webrtcup', () => {
    logEvent('webrtcup', 'PeerConnection is up');
    demo.webrtcUp = true;
    if (demo.watching !== null) setState('up', `watching ${demo.watching}`);
  });
  handle.on('media', (m) => logEvent('media', `${m.type} ${m.mid ?? ''} ${m.receiving ? 'receiving' : 'not receiving'}`));
  handle.on('slowlink', (m) => logEvent('slowlink', `${m.media ?? ''} ${m.uplink ? 'uplink' : 'downlink'}, lost ${m.lost}`));
  handle.on('hangup', (m) => {
    logEvent('hangup', m.reason ?? '');
    // The hangup that follows our own stop is awaited by stopWatching; any other ends the viewing.
    if (demo.viewer && demo.state !== 'stopping') endViewer();
  });
}

async function refreshList() {
  try {
    demo.mountpoints = await listMountpoints(demo.handle);
  } catch (err) {
    logEvent('error', `list: ${err.message ?? err}`);
    return;
  }
  logEvent('list', `${demo.mountpoints.length} mountpoints`);
  const select = $('mountpoints');
  select.replaceChildren(
    ...demo.mountpoints.map((m) => {
      const o = new Option(`${m.id} · ${m.description ?? ''} (${m.type})${m.enabled === false ? ' – disabled' : ''}`, m.id);
      o.disabled = m.enabled === false;
      return o;
    }),
  );
  const keep = demo.mountpoints.find((m) => m.id === (demo.selected ?? demo.watching));
  demo.selected = keep?.id ?? demo.mountpoints.find((m) => m.enabled !== false)?.id ?? null;
  if (demo.selected !== null) select.value = String(demo.selected);
  renderButtons();
  if (demo.watching === null) await showMountpoint(demo.selected);
}

/** Shows a mountpoint's details (the info request; the list's entry if info fails). */
async function showMountpoint(id) {
  const entry = demo.mountpoints.find((m) => m.id === id);
  let info = entry ?? null;
  if (id !== null) {
    try {
      info = (await demo.handle.message({ request: 'info', id })).data.info ?? entry;
    } catch (err) {
      logEvent('error', `info ${id}: ${err.message ?? err}`);
    }
  }
  if (id === demo.watching) demo.info = info;
  $('description').textContent = info ? [info.description, info.metadata].filter(Boolean).join(' — ') : 'No mountpoint.';
  $('description').classList.toggle('muted', !info);
  const list = entry?.media ?? [];
  $('media').replaceChildren(
    ...(info?.media ?? []).map((m) => {
      const age = list.find((l) => l.mid === m.mid)?.age_ms;
      const layers = [m.videosimulcast && 'simulcast', m.videosvc && 'SVC'].filter(Boolean).join(', ');
      return row([m.mid, m.type, m.codec ?? '', m.label ?? '', layers || '–', age === undefined ? '–' : formatAge(age)]);
    }),
  );
}

function row(cells) {
  const tr = document.createElement('tr');
  for (const c of cells) tr.insertCell().textContent = c;
  return tr;
}

function formatAge(ms) {
  return ms < 1000 ? `${ms} ms ago` : `${(ms / 1000).toFixed(1)} s ago`;
}

async function watchOrSwitch() {
  const id = demo.selected;
  if (id === null) return;
  if (demo.viewer) return switchTo(id);
  setState('negotiating', `watching ${id}…`);
  const viewer = new StreamViewer(demo.handle, { onTrack: showTrack });
  demo.viewer = viewer;
  watchViewer(viewer);
  try {
    await viewer.watch(id);
  } catch (err) {
    logEvent('error', `watch ${id}: ${err.message ?? err}`);
    endViewer();
    return;
  }
  demo.watching = id;
  logEvent('watch', `mountpoint ${id}`);
  if (demo.state === 'negotiating') setState(viewer.status === 'started' || demo.webrtcUp ? 'up' : 'watching', `watching ${id}`);
  $('watching').textContent = `watching ${id}`;
  startStats(viewer.pc);
  await showMountpoint(id);
}

async function switchTo(id) {
  const from = demo.watching;
  setState('negotiating', `switching to ${id}…`);
  try {
    await demo.viewer.switchTo(id);
  } catch (err) {
    // Janus switches only between live RTP mountpoints (458); for the others, watch anew.
    if (err instanceof JanusError && err.code === 458) {
      logEvent('switch', `${err.reason}: watching ${id} on a new PeerConnection`);
      await stopWatching();
      demo.selected = id;
      return watchOrSwitch();
    }
    logEvent('error', `switch to ${id}: ${err.message ?? err}`);
    setState('up', `watching ${from}`);
    return;
  }
  demo.watching = id;
  demo.layers = {};
  logEvent('switch', `mountpoint ${from} → ${id}, same PeerConnection`);
  setState('up', `watching ${id}`);
  $('watching').textContent = `watching ${id}`;
  await showMountpoint(id);
  renderLayerControls();
}

function watchViewer(viewer) {
  viewer.on('status', (s) => {
    logEvent('status', s);
    if (s === 'started' && demo.state === 'watching') setState('up', `watching ${demo.watching}`);
    if (s === 'stopped' && demo.viewer === viewer) endViewer();
  });
  viewer.on('layer', (l) => {
    const mid = l.mid ?? firstVideoMid();
    demo.layers[mid] = { ...demo.layers[mid], ...l, mid };
    logEvent('layer', `${mid}: ${describeLayer(demo.layers[mid])}`);
    renderLayerControls();
  });
  viewer.on('event', (e) => {
    // Statuses and layers have their own lines.
    const r = e.data?.result ?? {};
    if (r.status === undefined && r.substream === undefined && r.temporal === undefined) logEvent('event', JSON.stringify(e.data));
  });
}

function showTrack(track, mid) {
  if (track.kind === 'audio') {
    const audio = document.createElement('audio');
    audio.autoplay = true;
    audio.dataset.mid = mid;
    audio.srcObject = new MediaStream([track]);
    $('audios').append(audio);
    return;
  }
  const fig = $('video-tpl').content.firstElementChild.cloneNode(true);
  fig.dataset.mid = mid;
  fig.querySelector('.mid').textContent = `mid ${mid}`;
  fig.querySelector('video').srcObject = new MediaStream([track]);
  fig.querySelector('.substream').addEventListener('change', (e) => setLayer(mid, { substream: Number(e.target.value) }));
  fig.querySelector('.temporal').addEventListener('change', (e) => setLayer(mid, { temporal: Number(e.target.value) }));
  $('videos').append(fig);
  renderLayerControls();
}

function firstVideoMid() {
  return $('videos').querySelector('figure')?.dataset.mid ?? '';
}

/** Asks for a simulcast substream or temporal layer on one video stream. */
async function setLayer(mid, layer) {
  logEvent('configure', `${mid}: ${JSON.stringify(layer)}`);
  try {
    await demo.viewer?.configure({ mid, ...layer });
  } catch (err) {
    logEvent('error', `configure: ${err.message ?? err}`);
  }
}

function describeLayer(l) {
  const parts = [];
  if (l.substream !== undefined) parts.push(`substream ${l.substream}`);
  if (l.temporal !== undefined) parts.push(`temporal ${l.temporal}`);
  if (l.spatial_layer !== undefined) parts.push(`spatial ${l.spatial_layer}`);
  if (l.temporal_layer !== undefined) parts.push(`temporal ${l.temporal_layer}`);
  return parts.join(' · ');
}

/** Shows the layer controls on video streams the mountpoint simulcasts, with what is received. */
function renderLayerControls() {
  for (const fig of $('videos').querySelectorAll('figure')) {
    const mid = fig.dataset.mid;
    const media = demo.info?.media?.find((m) => m.mid === mid);
    const layer = demo.layers[mid];
    fig.querySelector('.layers').hidden = !(media?.videosimulcast || layer?.substream !== undefined);
    fig.querySelector('.layer').textContent = layer ? `receiving ${describeLayer(layer)}` : '';
  }
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
  $('v-in').textContent = `${Math.round(s.bitrateInKbps)} kbit/s`;
  $('v-loss').textContent = `${s.lossPercent.toFixed(1)} %`;
  $('v-height').textContent = s.videos.map((v) => `${s.videos.length > 1 ? `${v.mid} ` : ''}${v.frameHeight || '–'}p`).join(' · ') || '–';
  for (const v of s.videos) {
    const fig = $('videos').querySelector(`figure[data-mid="${CSS.escape(v.mid)}"]`);
    if (!fig) continue;
    fig.querySelector('.info').textContent = v.frameWidth
      ? `${v.frameWidth}×${v.frameHeight} · ${Math.round(v.framesPerSecond)} fps · ${Math.round(v.bitrateKbps)} kbit/s`
      : `${Math.round(v.bitrateKbps)} kbit/s`;
  }
  drawCharts(all);
}

function drawCharts(all) {
  const css = getComputedStyle(document.documentElement);
  const color = (name) => css.getPropertyValue(name).trim();
  drawChart($('chart-bitrate'), [{ color: color('--in'), values: all.map((s) => s.bitrateInKbps) }], { minMax: 100 });
  const colors = ['--in', '--out', '--rtt'];
  const mids = [...new Set(all.flatMap((s) => s.videos.map((v) => v.mid)))].slice(0, colors.length);
  drawChart(
    $('chart-height'),
    mids.map((mid, i) => ({
      color: color(colors[i]),
      values: all.map((s) => s.videos.find((v) => v.mid === mid)?.frameHeight ?? null),
    })),
    { unit: 'p', minMax: 180 },
  );
  drawChart($('chart-loss'), [{ color: color('--loss'), values: all.map((s) => s.lossPercent) }], { unit: '%', minMax: 5 });
}

/**
 * Stops watching (stop, then the PeerConnection closes); the session stays. The next viewing gets
 * a new handle (unless newHandle is false): Janus may still hold the old PeerConnection's ICE agent
 * after the hangup, and then takes a new watch's offer on that handle for an update of it.
 */
async function stopWatching(newHandle = true) {
  const viewer = demo.viewer;
  if (!viewer) return;
  setState('stopping', 'stopping…');
  // The server hangs up the PeerConnection after stop; wait for that (briefly), so that the hangup
  // cannot be taken for the end of a viewing started right after.
  const hungUp = new Promise((resolve) => {
    const timer = setTimeout(resolve, 3000);
    demo.handle?.once('hangup', () => resolve(clearTimeout(timer)));
  });
  await viewer.stop().catch(() => {});
  await hungUp;
  if (newHandle && demo.session) {
    const old = demo.handle;
    try {
      demo.handle = await attachHandle();
    } catch (err) {
      return fail(err);
    }
    old?.detach().catch(() => {});
  }
  endViewer();
}

/** Forgets the viewer and its media, after a stop or the server's hangup. */
function endViewer() {
  demo.sampler?.stop();
  demo.viewer?.close();
  Object.assign(demo, { viewer: null, sampler: null, watching: null, info: null, layers: {}, webrtcUp: false });
  $('videos').replaceChildren();
  $('audios').replaceChildren();
  $('watching').textContent = 'not watching';
  setState(demo.handle ? 'ready' : 'idle', demo.handle ? 'connected' : 'idle');
}

async function disconnect() {
  await stopWatching(false);
  setState('stopping', 'stopping…');
  const { handle, session } = demo;
  Object.assign(demo, { handle: null, session: null, mountpoints: [], selected: null });
  await handle?.detach().catch(() => {});
  await session?.destroy().catch(() => {});
  $('mountpoints').replaceChildren();
  setState('idle');
}

function fail(err) {
  console.error('streaming:', err);
  demo.error = String(err?.message ?? err);
  logEvent('error', demo.error);
  const { session } = demo;
  demo.sampler?.stop();
  demo.viewer?.close();
  session?.destroy().catch(() => {});
  Object.assign(demo, { viewer: null, sampler: null, handle: null, session: null, watching: null });
  setState('error', `error: ${demo.error}`);
}

function showServer(url, transport) {
  $('server').textContent = `${transport === 'ws' ? 'WebSocket' : 'HTTP long-poll'} · ${url}`;
}

$('start').addEventListener('click', () => (demo.state === 'idle' || demo.state === 'error' ? start() : disconnect()));
$('mountpoints').addEventListener('change', async (e) => {
  demo.selected = Number(e.target.value);
  renderButtons();
  if (demo.watching === null) await showMountpoint(demo.selected);
});
$('refresh').addEventListener('click', () => refreshList());
$('watch').addEventListener('click', () => watchOrSwitch());
$('stop').addEventListener('click', () => stopWatching());
window.addEventListener('pagehide', () => demo.session?.destroy().catch(() => {}));
drawCharts([]);
resolveServer().then(({ url, transport }) => showServer(url, transport));

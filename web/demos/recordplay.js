// The record-and-play demo: record the camera and microphone with janus.plugin.recordplay (the page
// offers, the server answers and writes .mjr files), then play a recording back (the server offers
// the recording's tracks, the page answers with `start`); pause and resume the playback.
// State is exposed on window.strataDemo for people and for tests:
//   state       "idle" | "connecting" | "recording" | "preparing" | "playing" | "paused" | "stopping"
//               | "error"
//   recordings  the last `list`: [{id, name, date, audio, video, audio_codec, video_codec}]
//   recordingId the id of the recording being made or played
//   events      [{name, detail, time}] in arrival order
//   pc          the RTCPeerConnection of the recording or the playback

import { connect, startCall, resolveServer } from '../lib/strata.js';
import { eventLog } from './eventlog.js';

const PLUGIN = 'janus.plugin.recordplay';
const $ = (id) => document.getElementById(id);

const demo = {
  state: 'idle', recordings: [], recordingId: 0, events: [], error: null,
  session: null, handle: null, call: null, pc: null,
};
window.strataDemo = demo;

const logEvent = eventLog(demo.events, $('events'), 40);

function setState(state, text = state) {
  demo.state = state;
  $('status').dataset.state = state;
  $('status').textContent = text;
  const busy = !['idle', 'error'].includes(state);
  $('record').disabled = busy;
  $('play').disabled = busy || demo.recordings.length === 0;
  $('stop').disabled = !busy;
  $('pause').disabled = !['playing', 'paused', 'recording'].includes(state);
  $('pause').textContent = state === 'paused' ? 'Resume' : 'Pause';
}

/** Connects once; the handle stays attached between recordings and playbacks. */
async function ensureHandle() {
  if (demo.handle) return demo.handle;
  const { url, transport } = await resolveServer();
  $('server').textContent = `${transport === 'ws' ? 'WebSocket' : 'HTTP long-poll'} · ${url}`;
  demo.session = await connect(url);
  demo.session.on('disconnected', (err) => fail(err ?? new Error('lost the connection to the server')));
  demo.handle = await demo.session.attach(PLUGIN);
  demo.handle.on('webrtcup', () => logEvent('webrtcup', 'PeerConnection is up'));
  demo.handle.on('hangup', (m) => logEvent('hangup', m.reason ?? ''));
  demo.handle.on('event', (e) => onEvent(e.data));
  return demo.handle;
}

function onEvent(d) {
  logEvent('event', JSON.stringify(d));
  // "done": the PeerConnection is gone (stop, or the playback reached its end).
  if (d.result === 'done') finish();
}

async function refresh() {
  try {
    const handle = await ensureHandle();
    const { data } = await handle.message({ request: 'list' });
    demo.recordings = data.list ?? [];
    const select = $('recordings');
    const keep = select.value;
    select.replaceChildren(...demo.recordings.map((r) => {
      const o = document.createElement('option');
      o.value = String(r.id);
      o.textContent = `${r.name} · ${r.date}`;
      return o;
    }));
    if (keep && demo.recordings.some((r) => String(r.id) === keep)) select.value = keep;
    setState(demo.state, $('status').textContent);
  } catch (err) {
    fail(err);
  }
}

async function record() {
  demo.error = null;
  setState('connecting', 'connecting…');
  try {
    const handle = await ensureHandle();
    demo.call = await startCall(handle, { body: { request: 'record', name: $('name').value || 'A recording' } });
    demo.pc = demo.call.pc;
    demo.recordingId = demo.call.reply.data.result?.id ?? 0;
    $('local').srcObject = demo.call.localStream;
    logEvent('recording', `id ${demo.recordingId}`);
    setState('recording', `recording ${demo.recordingId}`);
  } catch (err) {
    fail(err);
  }
}

async function play() {
  const id = Number($('recordings').value);
  if (!id) return;
  demo.error = null;
  setState('preparing', 'preparing…');
  try {
    const handle = await ensureHandle();
    const { data, jsep } = await handle.message({ request: 'play', id });
    if (data.result?.warning) logEvent('warning', data.result.warning);
    const pc = new RTCPeerConnection({ bundlePolicy: 'max-bundle' });
    demo.pc = pc;
    const remote = new MediaStream();
    pc.addEventListener('track', (e) => {
      remote.addTrack(e.track);
      $('remote').srcObject = remote;
    });
    const release = trickle(pc, handle);
    await pc.setRemoteDescription(jsep);
    await pc.setLocalDescription(await pc.createAnswer());
    await handle.message({ request: 'start' }, pc.localDescription);
    release();
    demo.recordingId = id;
    setState('playing', `playing ${id}`);
  } catch (err) {
    fail(err);
  }
}

// Candidates go to the server only once it has the answer they belong to: held until release().
function trickle(pc, handle) {
  let held = [];
  const send = (c) => handle.trickle(c).catch(() => {});
  pc.addEventListener('icecandidate', (e) => (held ? held.push(e.candidate ?? null) : send(e.candidate ?? null)));
  return function release() {
    const pending = held ?? [];
    held = null;
    pending.forEach(send);
  };
}

async function pauseResume() {
  const resume = demo.state === 'paused';
  try {
    await demo.handle.message({ request: resume ? 'resume' : 'pause' });
    const playing = demo.call ? 'recording' : 'playing';
    setState(resume ? playing : 'paused', resume ? `${playing} ${demo.recordingId}` : `paused ${demo.recordingId}`);
  } catch (err) {
    logEvent('error', String(err.message ?? err));
  }
}

// The server answers "stopped", then hangs up and says "done" once the recording is complete
// (its .nfo written): only then is it listed, so a recording finishes on "done".
async function stop() {
  const recording = Boolean(demo.call);
  setState('stopping', 'stopping…');
  try {
    await demo.handle?.message({ request: 'stop' });
  } catch (err) {
    logEvent('error', String(err.message ?? err));
  }
  if (recording) setTimeout(finish, 5000); // in case "done" never comes
  else finish();
}

/** Closes the local side of the recording or playback; the handle stays for the next one. */
function finish() {
  if (demo.state === 'idle') return;
  const wasRecording = Boolean(demo.call);
  demo.call?.close();
  if (!demo.call) demo.pc?.close();
  Object.assign(demo, { call: null, pc: null });
  $('local').srcObject = null;
  $('remote').srcObject = null;
  setState('idle');
  if (wasRecording) refresh(); // the recording is listed once the server completed it
}

function fail(err) {
  console.error('recordplay:', err);
  demo.error = String(err?.message ?? err);
  logEvent('error', demo.error);
  demo.call?.close();
  demo.pc?.close();
  Object.assign(demo, { call: null, pc: null });
  setState('error', `error: ${demo.error}`);
}

$('record').addEventListener('click', record);
$('play').addEventListener('click', play);
$('pause').addEventListener('click', pauseResume);
$('stop').addEventListener('click', stop);
$('refresh').addEventListener('click', refresh);
window.addEventListener('pagehide', () => demo.session?.destroy().catch(() => {}));
setState('idle');
refresh();

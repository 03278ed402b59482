// The audio bridge demo: join a janus.plugin.audiobridge room (an audio mixer: everyone sends one
// stream and hears the mix of the others), mute and unmute, and see who talks. The participant list
// comes from the plugin's joined / participants / leaving events; a participant turns green on the
// plugin's talking / stopped-talking events (rooms with audiolevel_event). The level bars are
// local: yours is your microphone (getStats media-source audioLevel), the others' is the level of
// the mix you receive while they talk, and the last row is the mix itself (inbound-rtp audioLevel).
// State is exposed on window.strataDemo: state, events, error, room, id, muted, participants
// (id → {display, muted, setup, talking}), mixLevel, micLevel (0..1, linear), session, handle,
// call and pc.

import { connect, resolveServer, startCall } from '../lib/strata.js';
import { eventLog } from './eventlog.js';

const PLUGIN = 'janus.plugin.audiobridge';
const $ = (id) => document.getElementById(id);

const demo = {
  state: 'idle', events: [], error: null, room: 0, id: null, muted: false, participants: new Map(),
  mixLevel: 0, micLevel: 0, session: null, handle: null, call: null, sampler: null,
  get pc() {
    return this.call?.pc ?? null;
  },
};
window.strataDemo = demo;
const logEvent = eventLog(demo.events, $('events'));
const rows = new Map(); // participant id (or 'mix') → <li>

function setState(state, text = state) {
  demo.state = state;
  $('status').dataset.state = state;
  $('status').textContent = text;
  $('start').textContent = state === 'idle' || state === 'error' ? 'Join' : 'Leave';
  $('start').disabled = ['connecting', 'stopping'].includes(state);
  $('mute').disabled = !['connected', 'up'].includes(state);
}

async function join() {
  demo.error = null;
  setState('connecting', 'connecting…');
  try {
    const { url } = await resolveServer();
    demo.session = await connect(url);
    demo.session.on('disconnected', (err) => fail(err ?? new Error('lost the server')));
    demo.session.on('timeout', () => fail(new Error('the server timed the session out')));
    demo.handle = await demo.session.attach(PLUGIN, { opaqueId: `audiobridge-${crypto.randomUUID().slice(0, 8)}` });
    watchHandle(demo.handle);
    demo.room = Number($('room').value);
    const display = $('display').value || undefined;
    // The reply is the joined event with our id; onEvent has seen it already and set demo.id.
    await demo.handle.message({ request: 'join', room: demo.room, display });
    logEvent('joined', `room ${demo.room} as ${demo.id}`);
    demo.muted = false;
    setPerson(demo.id, { display: display ?? 'you', muted: false, setup: false, talking: false });
    setState('connected', 'connecting audio…');
    demo.call = await startCall(demo.handle, {
      body: { request: 'configure', muted: false },
      audio: true,
      video: false,
      onTrack: () => ($('mix').srcObject = demo.call?.remoteStream ?? null),
    });
    $('mix').srcObject = demo.call.remoteStream;
    demo.sampler = setInterval(sampleLevels, 100);
  } catch (err) {
    fail(err);
  }
}

function watchHandle(handle) {
  handle.on('event', (e) => onEvent(e.data));
  handle.on('webrtcup', () => {
    logEvent('webrtcup', 'audio is flowing');
    setPerson(demo.id, { setup: true });
    setState('up', 'in the room');
  });
  handle.on('hangup', (m) => logEvent('hangup', m.reason ?? ''));
}

// Janus's shapes (docs/AUDIOBRIDGE.md): our own joined has our id, the others' has none.
function onEvent(d) {
  if (d.error_code) {
    logEvent('error', `${d.error_code} ${d.error}`);
    return;
  }
  if (d.audiobridge === 'joined' && d.id !== undefined) demo.id = d.id;
  for (const p of d.participants ?? []) {
    // A moderator's mute (the mute request) reaches us as an update of our own entry.
    if (p.id === demo.id) showMuted(Boolean(p.muted));
    else if (!demo.participants.has(p.id)) logEvent('participant', `${p.display ?? p.id} joined`);
    setPerson(p.id, { display: p.display ?? String(p.id), muted: Boolean(p.muted), setup: Boolean(p.setup), talking: Boolean(p.talking) });
  }
  if (d.leaving !== undefined) removePerson(d.leaving, 'left');
  if (d.kicked !== undefined) {
    if (d.kicked === demo.id) {
      logEvent('kicked', 'a moderator removed you');
      leave();
    } else {
      removePerson(d.kicked, 'was kicked');
    }
  }
  if (d.audiobridge === 'talking' || d.audiobridge === 'stopped-talking') {
    const talking = d.audiobridge === 'talking';
    setPerson(d.id, { talking });
    logEvent(d.audiobridge, demo.participants.get(d.id)?.display ?? String(d.id));
  }
  if (d.audiobridge === 'event' && typeof d.muted === 'boolean' && !d.participants) {
    logEvent('room', d.muted ? 'the room is muted' : 'the room is unmuted');
  }
  if (d.audiobridge === 'destroyed') {
    logEvent('destroyed', `room ${d.room}`);
    leave();
  }
}

function setPerson(id, changes) {
  if (id == null) return;
  const p = { ...(demo.participants.get(id) ?? { display: String(id), muted: false, setup: false, talking: false }), ...changes };
  demo.participants.set(id, p);
  let li = rows.get(id);
  if (!li) {
    li = $('person-tpl').content.firstElementChild.cloneNode(true);
    rows.set(id, li);
    // Us first, the mix last, the others in between in order of arrival.
    if (id === demo.id) $('people').prepend(li);
    else $('people').insertBefore(li, rows.get('mix') ?? null);
  }
  li.dataset.id = String(id);
  li.querySelector('.who').textContent = id === demo.id ? `${p.display} (you)` : p.display;
  li.classList.toggle('talking', p.talking && !p.muted);
  li.classList.toggle('muted', p.muted);
  li.querySelector('.state').textContent = p.muted ? 'muted' : !p.setup ? 'connecting…' : p.talking ? 'talking' : '';
  if (!rows.has('mix')) addMixRow();
}

function addMixRow() {
  const li = $('person-tpl').content.firstElementChild.cloneNode(true);
  li.classList.add('mix');
  li.dataset.id = 'mix';
  li.querySelector('.who').textContent = 'Room mix';
  rows.set('mix', li);
  $('people').append(li);
}

function removePerson(id, why) {
  const p = demo.participants.get(id);
  if (!p) return;
  logEvent('participant', `${p.display} ${why}`);
  demo.participants.delete(id);
  rows.get(id)?.remove();
  rows.delete(id);
}

// audioLevel is linear (0..1); the bars show it on a 60 dB scale, as level meters do.
function barWidth(level) {
  if (!(level > 0)) return '0%';
  return `${Math.round(Math.max(0, Math.min(1, 1 + (20 * Math.log10(level)) / 60)) * 100)}%`;
}

async function sampleLevels() {
  const pc = demo.pc;
  if (!pc || pc.connectionState === 'closed') return;
  let mix = 0;
  let mic = 0;
  (await pc.getStats()).forEach((s) => {
    if (s.type === 'inbound-rtp' && s.kind === 'audio') mix = s.audioLevel ?? 0;
    if (s.type === 'media-source' && s.kind === 'audio') mic = s.audioLevel ?? 0;
  });
  demo.mixLevel = mix;
  demo.micLevel = mic;
  for (const [id, li] of rows) {
    const p = demo.participants.get(id);
    let level = 0;
    if (id === 'mix') level = mix;
    else if (id === demo.id) level = demo.muted ? 0 : mic;
    else if (p?.talking && !p.muted) level = mix;
    li.querySelector('.level > span').style.width = barWidth(level);
  }
}

function showMuted(muted) {
  demo.muted = muted;
  setPerson(demo.id, { muted });
  $('mute').textContent = muted ? 'Unmute' : 'Mute';
}

async function toggleMute() {
  const muted = !demo.muted;
  try {
    await demo.handle.message({ request: 'configure', muted });
    showMuted(muted);
    logEvent('configure', muted ? 'muted' : 'unmuted');
  } catch (err) {
    logEvent('error', String(err.message ?? err));
  }
}

async function leave() {
  if (demo.state === 'stopping' || demo.state === 'idle') return;
  setState('stopping', 'leaving…');
  clearInterval(demo.sampler);
  const { call, handle, session } = demo;
  Object.assign(demo, { call: null, handle: null, session: null, sampler: null, id: null, muted: false, mixLevel: 0, micLevel: 0 });
  // Each step is best effort: the server may already have dropped the participant or the session.
  await handle?.message({ request: 'leave' }).catch(() => {});
  call?.close();
  await session?.destroy().catch(() => {});
  clearPeople();
  setState('idle');
}

function clearPeople() {
  demo.participants.clear();
  rows.clear();
  $('people').textContent = '';
  $('mix').srcObject = null;
  $('mute').textContent = 'Mute';
}

function fail(err) {
  console.error('audiobridge:', err);
  demo.error = String(err?.message ?? err);
  logEvent('error', demo.error);
  clearInterval(demo.sampler);
  demo.call?.close();
  demo.session?.destroy().catch(() => {});
  Object.assign(demo, { call: null, handle: null, session: null, sampler: null, id: null });
  clearPeople();
  setState('error', `error: ${demo.error}`);
}

$('start').addEventListener('click', () => (demo.state === 'idle' || demo.state === 'error' ? join() : leave()));
$('mute').addEventListener('click', toggleMute);
window.addEventListener('pagehide', () => demo.session?.destroy().catch(() => {}));
const params = new URLSearchParams(location.search);
if (params.get('room')) $('room').value = params.get('room');
resolveServer().then(({ url, transport }) => {
  $('server').textContent = `${transport === 'ws' ? 'WebSocket' : 'HTTP long-poll'} · ${url}`;
});

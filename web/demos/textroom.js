// The text room demo: set up a janus.plugin.textroom data channel (the server offers it, the page
// answers), join a room under a name, chat with everyone or whisper to one participant, and see who
// joins and leaves and the room's announcements. Everything after setup travels on the data
// channel (lib/textroom.js). State is exposed on window.strataDemo: state, events, error, room,
// username, participants (username → display), messages ({kind, from, text, whisper, date}),
// session, handle and textroom.

import { connect, resolveServer, TextRoom } from '../lib/strata.js';
import { eventLog } from './eventlog.js';

const PLUGIN = 'janus.plugin.textroom';
const $ = (id) => document.getElementById(id);

const demo = {
  state: 'idle', events: [], error: null, room: null, username: null, participants: new Map(), messages: [],
  session: null, handle: null, textroom: null,
};
window.strataDemo = demo;
const logEvent = eventLog(demo.events, $('events'));

function setState(state, text = state) {
  demo.state = state;
  $('status').dataset.state = state;
  $('status').textContent = text;
  $('start').textContent = state === 'idle' || state === 'error' ? 'Join' : 'Leave';
  $('start').disabled = ['connecting', 'stopping'].includes(state);
  const inRoom = state === 'up';
  $('text').disabled = !inRoom;
  $('send').disabled = !inRoom;
  $('room').disabled = state !== 'idle' && state !== 'error';
  $('username').disabled = $('room').disabled;
}

// A room id is a number unless the server uses string ids (plugins.textroom.string_ids).
function roomId(text) {
  return /^[1-9]\d*$/.test(text) ? Number(text) : text;
}

async function join() {
  demo.error = null;
  setState('connecting', 'connecting…');
  try {
    const { url } = await resolveServer();
    demo.session = await connect(url);
    demo.session.on('disconnected', (err) => fail(err ?? new Error('lost the server')));
    demo.session.on('timeout', () => fail(new Error('the server timed the session out')));
    demo.handle = await demo.session.attach(PLUGIN, { opaqueId: `textroom-${crypto.randomUUID().slice(0, 8)}` });
    demo.handle.on('hangup', (m) => logEvent('hangup', m.reason ?? ''));
    demo.textroom = new TextRoom(demo.handle);
    watchRoom(demo.textroom);
    setState('connecting', 'opening the data channel…');
    await demo.textroom.setup();
    logEvent('setup', 'data channel open');
    demo.room = roomId($('room').value.trim());
    demo.username = $('username').value.trim() || `guest-${crypto.randomUUID().slice(0, 4)}`;
    const reply = await demo.textroom.join(demo.room, demo.username, { display: demo.username });
    logEvent('joined', `room ${demo.room} as ${demo.username}`);
    addPerson(demo.username, demo.username);
    for (const p of reply.participants ?? []) addPerson(p.username, p.display ?? p.username);
    setState('up', 'in the room');
    $('text').focus();
  } catch (err) {
    fail(err);
  }
}

function watchRoom(tr) {
  tr.on('message', (m) => {
    if (m.room !== demo.room) return;
    say({ kind: 'message', from: m.from, text: m.text, whisper: Boolean(m.whisper), date: m.date });
  });
  tr.on('announcement', (m) => m.room === demo.room && say({ kind: 'announcement', from: 'announcement', text: m.text, date: m.date }));
  tr.on('join', (m) => {
    if (m.room !== demo.room || m.username === demo.username) return;
    addPerson(m.username, m.display ?? m.username);
    say({ kind: 'notice', text: `${m.display ?? m.username} joined` });
  });
  tr.on('leave', (m) => {
    if (m.room !== demo.room || m.username === demo.username) return;
    removePerson(m.username, 'left');
  });
  tr.on('kicked', (m) => {
    if (m.room !== demo.room) return;
    if (m.username === demo.username) {
      logEvent('kicked', 'a moderator removed you');
      leave();
    } else {
      removePerson(m.username, 'was kicked');
    }
  });
  tr.on('destroyed', (m) => {
    if (m.room !== demo.room) return;
    logEvent('destroyed', `room ${m.room}`);
    leave();
  });
  tr.on('error', (err) => logEvent('error', err.message));
  tr.on('close', () => demo.state === 'up' && fail(new Error('the data channel closed')));
}

// say appends a line to the message log (and to demo.messages).
function say(m) {
  demo.messages.push(m);
  const li = document.createElement('li');
  li.className = `m-${m.kind}` + (m.whisper ? ' whisper' : ''); // not .notice: strata.css styles that
  li.innerHTML = '<time></time><span class="from"></span><span class="text"></span>';
  li.querySelector('time').textContent = new Date(m.date ?? Date.now()).toLocaleTimeString([], { hour12: false });
  const who = m.kind === 'message' ? (demo.participants.get(m.from) ?? m.from) : m.from ?? '';
  li.querySelector('.from').textContent = who;
  li.querySelector('.text').textContent = m.text;
  $('log').append(li);
  $('log').scrollTop = $('log').scrollHeight;
}

function addPerson(username, display) {
  demo.participants.set(username, display);
  renderPeople();
}

function removePerson(username, why) {
  const display = demo.participants.get(username);
  if (display === undefined) return;
  demo.participants.delete(username);
  renderPeople();
  say({ kind: 'notice', text: `${display} ${why}` });
  logEvent('participant', `${display} ${why}`);
}

// renderPeople redraws the participant list and the "To" choices (everyone, or one of the others).
function renderPeople() {
  const people = $('people');
  const to = $('to');
  const chosen = to.value;
  people.textContent = '';
  to.length = 1;
  for (const [username, display] of demo.participants) {
    const li = document.createElement('li');
    li.textContent = username === demo.username ? `${display} (you)` : display;
    li.classList.toggle('me', username === demo.username);
    people.append(li);
    if (username !== demo.username) to.add(new Option(display, username));
  }
  to.value = demo.participants.has(chosen) ? chosen : '';
}

async function send(ev) {
  ev.preventDefault();
  const text = $('text').value;
  if (!text || demo.state !== 'up') return;
  const to = $('to').value;
  try {
    const reply = await demo.textroom.send(demo.room, text, to ? { to } : {});
    $('text').value = '';
    // Whispers are not echoed to their sender: show our own copy.
    if (to) {
      const delivered = reply.sent?.[to] === true;
      say({ kind: 'message', from: demo.username, text: `→ ${demo.participants.get(to) ?? to}: ${text}`, whisper: true });
      if (!delivered) logEvent('error', `${to} did not get the message`);
    }
  } catch (err) {
    logEvent('error', String(err.message ?? err));
  }
}

async function leave() {
  if (demo.state === 'stopping' || demo.state === 'idle') return;
  setState('stopping', 'leaving…');
  const { textroom, session, room } = demo;
  Object.assign(demo, { textroom: null, handle: null, session: null, room: null, username: null });
  // Each step is best effort: the server may already have dropped us or the session.
  await textroom?.leave(room).catch(() => {});
  textroom?.close();
  await session?.destroy().catch(() => {});
  clearPeople();
  setState('idle');
}

function clearPeople() {
  demo.participants.clear();
  renderPeople();
}

function fail(err) {
  console.error('textroom:', err);
  demo.error = String(err?.message ?? err);
  logEvent('error', demo.error);
  demo.textroom?.close();
  demo.session?.destroy().catch(() => {});
  Object.assign(demo, { textroom: null, handle: null, session: null, room: null, username: null });
  clearPeople();
  setState('error', `error: ${demo.error}`);
}

$('start').addEventListener('click', () => (demo.state === 'idle' || demo.state === 'error' ? join() : leave()));
$('compose').addEventListener('submit', send);
window.addEventListener('pagehide', () => demo.session?.destroy().catch(() => {}));
const params = new URLSearchParams(location.search);
if (params.get('room')) $('room').value = params.get('room');
if (params.get('name')) $('username').value = params.get('name');
resolveServer().then(({ url, transport }) => {
  $('server').textContent = `${transport === 'ws' ? 'WebSocket' : 'HTTP long-poll'} · ${url}`;
});

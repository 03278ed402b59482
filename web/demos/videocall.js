// The video call demo: register a name, call another user of the page (or answer their call) and
// see each other, with the data channel for text. strata relays the call (janus.plugin.videocall)
// and fits what each side receives to that side's own downlink. State is exposed on
// window.strataDemo for people and for tests:
//   state     "idle" | "connecting" | "registered" | "calling" | "incoming" | "incall" | "error"
//   events    [{name, detail, time}] in arrival order (registered, incomingcall, accepted, layer, data, hangup...)
//   received  the data channel messages received, as text
//   pc        the RTCPeerConnection while a call runs

import { connect, resolveServer, StatsSampler, VideoCall } from '../lib/strata.js';
import { eventLog } from './eventlog.js';

const PLUGIN = 'janus.plugin.videocall';
const $ = (id) => document.getElementById(id);

const demo = {
  state: 'idle',
  events: [],
  received: [],
  error: null,
  session: null,
  vc: null,
  sampler: null,
  get pc() {
    return this.vc?.pc ?? null;
  },
};
window.strataDemo = demo;
const logEvent = eventLog(demo.events, $('events'), 60);

function setState(state, text = state) {
  demo.state = state;
  $('status').dataset.state = state;
  $('status').textContent = text;
  const inCall = state === 'incall' || state === 'calling';
  $('register').disabled = state !== 'idle' && state !== 'error';
  $('username').disabled = $('register').disabled;
  $('peer').disabled = state !== 'registered';
  $('call').disabled = !['registered', 'calling', 'incall'].includes(state);
  $('call').textContent = inCall ? 'Hang up' : 'Call';
  $('incoming').hidden = state !== 'incoming';
  $('data-row').hidden = state !== 'incall';
  for (const id of ['audio', 'video', 'bitrate']) $(id).disabled = state !== 'incall';
}

async function register() {
  demo.error = null;
  setState('connecting', 'connecting…');
  try {
    const { url, transport } = await resolveServer();
    $('server').textContent = `${transport === 'ws' ? 'WebSocket' : 'HTTP long-poll'} · ${url}`;
    demo.session = await connect(url);
    demo.session.on('disconnected', (err) => fail(err ?? new Error('lost the connection to the server')));
    const handle = await demo.session.attach(PLUGIN, { opaqueId: `videocall-${crypto.randomUUID().slice(0, 8)}` });
    demo.vc = new VideoCall(handle, { onTrack: () => ($('remote').srcObject = demo.vc.remoteStream) });
    watch(demo.vc);
    const name = await demo.vc.register($('username').value.trim() || `user-${crypto.randomUUID().slice(0, 4)}`);
    $('username').value = name;
    logEvent('registered', name);
    setState('registered', `registered as ${name}`);
  } catch (err) {
    fail(err);
  }
}

function watch(vc) {
  vc.handle.on('webrtcup', () => logEvent('webrtcup', 'PeerConnection is up'));
  vc.on('incomingcall', ({ username }) => {
    logEvent('incomingcall', username);
    $('caller').textContent = username;
    setState('incoming', `call from ${username}`);
  });
  vc.on('accepted', () => inCall());
  vc.on('hangup', ({ username, reason }) => {
    logEvent('hangup', `${username ?? ''}: ${reason ?? ''}`);
    ended();
  });
  vc.on('layer', (l) => logEvent('layer', JSON.stringify(l)));
  vc.on('data', ({ data }) => {
    const text = typeof data === 'string' ? data : `(${data.byteLength ?? data.size} bytes)`;
    demo.received.push(text);
    logEvent('data', `${demo.vc.peer}: ${text}`);
  });
}

async function call() {
  const peer = $('peer').value.trim();
  if (!peer) return;
  setState('calling', `calling ${peer}…`);
  try {
    const pending = demo.vc.call(peer);
    showLocal();
    await pending;
  } catch (err) {
    logEvent('error', String(err.message ?? err));
    if (demo.state === 'calling') ended();
  }
}

async function answer() {
  try {
    await demo.vc.accept();
    showLocal();
    inCall();
  } catch (err) {
    fail(err);
  }
}

function showLocal() {
  // The call's stream exists once getUserMedia resolved, shortly after call() or accept() began.
  const show = () => (demo.vc?.localStream ? ($('local').srcObject = demo.vc.localStream) : setTimeout(show, 100));
  show();
}

function inCall() {
  if (demo.state === 'incall') return;
  logEvent('accepted', demo.vc.peer);
  $('remote-name').textContent = demo.vc.peer;
  setState('incall', `in a call with ${demo.vc.peer}`);
  demo.sampler?.stop();
  demo.sampler = new StatsSampler(demo.vc.pc, {
    onSample: (s) => {
      $('remote-info').textContent = s.frameWidth
        ? `${s.frameWidth}×${s.frameHeight} · ${Math.round(s.bitrateInKbps)} kbit/s in · ${Math.round(s.bitrateOutKbps)} kbit/s out`
        : '';
    },
  });
  demo.sampler.start();
}

function ended() {
  demo.sampler?.stop();
  demo.sampler = null;
  $('local').srcObject = null;
  $('remote').srcObject = null;
  $('remote-name').textContent = 'Nobody yet';
  $('remote-info').textContent = '';
  if (demo.vc) setState('registered', `registered as ${demo.vc.username}`);
}

async function hangup() {
  await demo.vc.hangup().catch((err) => logEvent('error', String(err.message ?? err)));
  logEvent('hangup', 'you hung up');
  ended();
}

function fail(err) {
  console.error('videocall:', err);
  demo.error = String(err?.message ?? err);
  logEvent('error', demo.error);
  demo.sampler?.stop();
  demo.session?.destroy().catch(() => {});
  Object.assign(demo, { session: null, vc: null, sampler: null });
  setState('error', `error: ${demo.error}`);
}

async function configure(body) {
  try {
    await demo.vc.set(body);
    logEvent('set', JSON.stringify(body));
  } catch (err) {
    logEvent('error', String(err.message ?? err));
  }
}

$('register').addEventListener('click', register);
$('call').addEventListener('click', () => (demo.state === 'registered' ? call() : hangup()));
$('answer').addEventListener('click', answer);
$('decline').addEventListener('click', () => hangup());
$('audio').addEventListener('change', (e) => configure({ audio: e.target.checked }));
$('video').addEventListener('change', (e) => configure({ video: e.target.checked }));
$('bitrate').addEventListener('change', (e) => configure({ bitrate: Number(e.target.value) }));
$('send').addEventListener('click', () => {
  const text = $('message').value;
  if (!text) return;
  try {
    demo.vc.send(text);
    logEvent('sent', text);
    $('message').value = '';
  } catch (err) {
    logEvent('error', String(err.message ?? err));
  }
});
window.addEventListener('pagehide', () => demo.session?.destroy().catch(() => {}));
setState('idle');
resolveServer().then(({ url, transport }) => {
  $('server').textContent = `${transport === 'ws' ? 'WebSocket' : 'HTTP long-poll'} · ${url}`;
});

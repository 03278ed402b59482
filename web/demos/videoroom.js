// The video room demo: join a janus.plugin.videoroom room, publish the camera (as three simulcast
// layers), and subscribe to everyone else on one PeerConnection (the server offers, the page
// answers). Each remote video shows the layer strata currently forwards to this browser (from the
// plugin's substream/temporal events, which follow this browser's own bandwidth estimate) and the
// bitrate it receives; the select caps the layer (configure substream).
// State is exposed on window.strataDemo: state, events, feeds (id → {display, mid}), streams
// (mid → {feed, layer, kbps}), session, publisher, subscriber, pubPc, subPc.

import { connect, resolveServer } from '../lib/strata.js';
import { eventLog } from './eventlog.js';

const PLUGIN = 'janus.plugin.videoroom';
const $ = (id) => document.getElementById(id);

const demo = {
  state: 'idle', events: [], error: null, feeds: new Map(), streams: new Map(),
  session: null, publisher: null, subscriber: null, pubPc: null, subPc: null, room: 0, privateId: 0,
};
window.strataDemo = demo;

function setState(state, text = state) {
  demo.state = state;
  $('status').dataset.state = state;
  $('status').textContent = text;
  $('start').textContent = state === 'idle' || state === 'error' ? 'Join' : 'Leave';
}

const logEvent = eventLog(demo.events, $('events'), 60);

async function join() {
  setState('connecting', 'connecting…');
  try {
    const { url } = await resolveServer();
    demo.session = await connect(url);
    demo.session.on('disconnected', (err) => fail(err ?? new Error('lost the server')));
    demo.publisher = await demo.session.attach(PLUGIN);
    demo.publisher.on('event', (e) => onPublisherEvent(e.data));
    demo.room = Number($('room').value);
    const { data } = await demo.publisher.message({ request: 'join', ptype: 'publisher', room: demo.room, display: $('display').value || undefined });
    demo.privateId = data.private_id;
    logEvent('joined', `room ${demo.room} as ${data.id}`);
    setState('connected', 'publishing…');
    await publish();
    addFeeds(data.publishers ?? []);
    setState('up', 'in the room');
  } catch (err) {
    fail(err);
  }
}

async function publish() {
  const stream = await navigator.mediaDevices.getUserMedia({ audio: true, video: { width: { ideal: 1280 }, height: { ideal: 720 } } });
  $('local').srcObject = stream;
  const pc = new RTCPeerConnection({ bundlePolicy: 'max-bundle' });
  demo.pubPc = pc;
  for (const track of stream.getTracks()) {
    const init = { direction: 'sendonly', streams: [stream] };
    if (track.kind === 'video' && $('simulcast').checked) {
      // Highest first, as janus.js lists them.
      init.sendEncodings = [
        { rid: 'h', maxBitrate: 1200000 },
        { rid: 'm', maxBitrate: 400000, scaleResolutionDownBy: 2 },
        { rid: 'l', maxBitrate: 120000, scaleResolutionDownBy: 4 },
      ];
    }
    pc.addTransceiver(track, init);
  }
  const release = trickle(pc, demo.publisher);
  await pc.setLocalDescription(await pc.createOffer());
  const { jsep } = await demo.publisher.message({ request: 'publish' }, pc.localDescription);
  await pc.setRemoteDescription(jsep);
  release();
  const s = stream.getVideoTracks()[0]?.getSettings();
  $('local-info').textContent = s?.width ? `${s.width}×${s.height}` : '';
}

// Candidates go to the server only once it has the description they belong to (over HTTP each
// request is its own POST, so an early candidate could overtake the offer): held until release().
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

function onPublisherEvent(d) {
  if (d.publishers) addFeeds(d.publishers);
  if (d.unpublished && d.unpublished !== 'ok') removeFeed(d.unpublished);
  if (d.leaving && d.leaving !== 'ok') removeFeed(d.leaving);
  if (d.videoroom === 'talking' || d.videoroom === 'stopped-talking') logEvent(d.videoroom, String(d.id));
}

// Subscriptions are serialised: one offer/answer at a time.
let queue = Promise.resolve();
const serial = (f) => (queue = queue.then(f).catch((err) => logEvent('error', String(err.message ?? err))));

function addFeeds(publishers) {
  const fresh = publishers.filter((p) => !demo.feeds.has(p.id));
  for (const p of fresh) {
    demo.feeds.set(p.id, { display: p.display ?? String(p.id) });
    logEvent('publisher', `${p.display ?? p.id} (${(p.streams ?? []).map((s) => s.codec).join(', ')})`);
  }
  if (!fresh.length) return;
  const streams = fresh.map((p) => ({ feed: p.id }));
  serial(async () => {
    if (!demo.subscriber) {
      demo.subscriber = await demo.session.attach(PLUGIN);
      demo.subscriber.on('event', (e) => onSubscriberEvent(e.data, e.jsep));
      const reply = await demo.subscriber.message({ request: 'join', ptype: 'subscriber', room: demo.room, private_id: demo.privateId, streams });
      await answer(reply.data, reply.jsep);
    } else {
      const reply = await demo.subscriber.message({ request: 'subscribe', streams });
      if (reply.jsep) await answer(reply.data, reply.jsep);
    }
  });
}

function removeFeed(id) {
  if (!demo.feeds.delete(id)) return;
  logEvent('left', String(id));
  for (const [mid, s] of demo.streams) {
    if (s.feed === id) {
      s.el?.remove();
      if (s.audio) s.audio.srcObject = null;
      demo.streams.delete(mid);
    }
  }
}

async function answer(data, jsep) {
  if (!demo.subPc) {
    const pc = new RTCPeerConnection({ bundlePolicy: 'max-bundle' });
    demo.subPc = pc;
    demo.releaseSub = trickle(pc, demo.subscriber);
    pc.addEventListener('track', (e) => showRemote(e.transceiver.mid, e.track));
    demo.sampler = setInterval(sampleRates, 1000);
  }
  for (const s of data.streams ?? []) {
    const known = demo.streams.get(s.mid) ?? {};
    // Only simulcast and SVC streams have layers to show and to cap.
    const layered = Boolean(s.simulcast || s.svc);
    demo.streams.set(s.mid, { ...known, feed: s.feed_id, kind: s.type, layered, display: s.feed_display ?? String(s.feed_id) });
  }
  await demo.subPc.setRemoteDescription(jsep);
  await demo.subPc.setLocalDescription(await demo.subPc.createAnswer());
  await demo.subscriber.message({ request: 'start' }, demo.subPc.localDescription);
  demo.releaseSub?.();
}

function onSubscriberEvent(d, jsep) {
  if (d.substream !== undefined || d.spatial_layer !== undefined) {
    const s = demo.streams.get(d.mid);
    if (!s) return;
    s.layer = d.substream ?? d.spatial_layer;
    s.temporal = d.temporal ?? d.temporal_layer;
    if (s.el) s.el.querySelector('.layer').textContent = layerName(s.layer, s.temporal, s.layered);
    logEvent('layer', `${s.display}: ${layerName(s.layer, s.temporal, s.layered)}`);
  }
  if (d.videoroom === 'updated' && jsep) serial(() => answer(d, jsep));
}

function layerName(spatial, temporal, layered = true) {
  if (!layered) return `single layer · t${temporal}`;
  return `${['low', 'medium', 'high'][spatial] ?? spatial} · t${temporal}`;
}

function showRemote(mid, track) {
  const s = demo.streams.get(mid);
  if (!s || track.kind !== 'video') {
    if (track.kind === 'audio') {
      // Not attached to the page, so it needs autoplay to be heard at all.
      const audio = new Audio();
      audio.autoplay = true;
      audio.srcObject = new MediaStream([track]);
      if (s) s.audio = audio;
    }
    return;
  }
  const el = $('remote-tpl').content.firstElementChild.cloneNode(true);
  el.querySelector('video').srcObject = new MediaStream([track]);
  el.querySelector('.who').textContent = s.display;
  if (s.layer !== undefined) el.querySelector('.layer').textContent = layerName(s.layer, s.temporal, s.layered);
  el.querySelector('.cap-row').hidden = !s.layered;
  el.querySelector('.cap').addEventListener('change', (e) => {
    const cap = Number(e.target.value);
    demo.subscriber?.message({ request: 'configure', streams: [{ mid, substream: cap, spatial_layer: cap }] })
      .then(() => logEvent('configure', `${s.display}: max ${e.target.selectedOptions[0].text}`))
      .catch((err) => logEvent('error', String(err.message ?? err)));
  });
  s.el = el;
  $('videos').append(el);
}

// Per-stream received bitrate and resolution, from getStats.
let lastBytes = new Map();
async function sampleRates() {
  if (!demo.subPc) return;
  const report = await demo.subPc.getStats();
  const byMid = new Map();
  report.forEach((r) => {
    if (r.type === 'inbound-rtp' && r.kind === 'video') byMid.set(r.mid, r);
  });
  for (const [mid, r] of byMid) {
    const s = demo.streams.get(mid);
    if (!s?.el) continue;
    const prev = lastBytes.get(mid);
    if (prev) s.kbps = ((r.bytesReceived - prev.bytes) * 8) / (r.timestamp - prev.at);
    lastBytes.set(mid, { bytes: r.bytesReceived, at: r.timestamp });
    s.el.querySelector('.rate').textContent = s.kbps != null ? `${Math.round(s.kbps)} kbit/s` : '–';
    s.el.querySelector('.size').textContent = r.frameWidth ? `${r.frameWidth}×${r.frameHeight}` : '';
  }
}

async function leave() {
  setState('stopping', 'leaving…');
  const { session } = demo;
  demo.pubPc?.close();
  demo.subPc?.close();
  $('local').srcObject?.getTracks().forEach((t) => t.stop());
  $('local').srcObject = null;
  for (const s of demo.streams.values()) {
    s.el?.remove();
    if (s.audio) s.audio.srcObject = null;
  }
  clearInterval(demo.sampler);
  Object.assign(demo, { session: null, publisher: null, subscriber: null, pubPc: null, subPc: null, sampler: null, releaseSub: null });
  demo.feeds.clear();
  demo.streams.clear();
  lastBytes = new Map();
  await session?.destroy().catch(() => {});
  setState('idle');
}

function fail(err) {
  console.error('videoroom:', err);
  demo.error = String(err?.message ?? err);
  logEvent('error', demo.error);
  leave().then(() => setState('error', `error: ${demo.error}`));
}

$('start').addEventListener('click', () => (demo.state === 'idle' || demo.state === 'error' ? join() : leave()));
window.addEventListener('pagehide', () => demo.session?.destroy().catch(() => {}));
const params = new URLSearchParams(location.search);
if (params.get('room')) $('room').value = params.get('room');
resolveServer().then(({ url, transport }) => {
  $('server').textContent = `${transport === 'ws' ? 'WebSocket' : 'HTTP long-poll'} · ${url}`;
});

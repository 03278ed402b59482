// A viewer of janus.plugin.streaming: one receive-only PeerConnection that watches a mountpoint,
// switches to others without a new PeerConnection, and picks simulcast or SVC layers. Unlike
// startCall (lib/webrtc.js) the server makes the offer: the viewer answers it and sends the answer
// with `start`, as Janus's streaming API wants, for the first offer and for any later one (a watch
// with restart, or a server that renegotiates on switch).
//
//   const handle = await session.attach('janus.plugin.streaming');
//   const viewer = new StreamViewer(handle, { onTrack: (track, mid) => show(track, mid) });
//   viewer.on('layer', (l) => console.log(l.mid, l.substream, l.temporal));
//   await viewer.watch(1);
//   await viewer.switchTo(2);
//   await viewer.configure({ mid: 'v', substream: 0 });
//   await viewer.stop();

import { Emitter } from './emitter.js';
import { trickleQueue, addServerCandidate } from './webrtc.js';

/**
 * Lists the mountpoints (the streaming `list` request).
 * @param {import('./strata.js').Handle} handle a janus.plugin.streaming handle
 * @returns {Promise<object[]>} Janus's list entries ({id, type, description, metadata, enabled, media}), by id
 */
export async function listMountpoints(handle) {
  const { data } = await handle.message({ request: 'list' });
  return (data.list ?? []).slice().sort((a, b) => a.id - b.id);
}

/**
 * One viewer. Events: "track" ({track, mid}) for each remote track, "status" (the plugin's
 * preparing, starting, started, pausing, stopping, stopped...), "layer" ({mid, substream, temporal,
 * spatial_layer, temporal_layer}: what the plugin says it now sends; fields it did not name are
 * absent), "switched" (the new mountpoint id), "event" (every plugin event, as Handle emits it).
 */
export class StreamViewer extends Emitter {
  /** @type {number|null} the mountpoint being watched */
  mountpoint = null;
  /** @type {string|null} the last status the plugin sent */
  status = null;
  /** @type {Map<string, MediaStreamTrack>} remote tracks by mid */
  tracks = new Map();
  /** @type {Map<string, object>} the last layer the plugin reported, by mid ("" when it named none) */
  layers = new Map();
  #offs = [];
  #trickle;
  #negotiation = null;
  #closed = false;

  /**
   * @param {import('./strata.js').Handle} handle a janus.plugin.streaming handle, used by this viewer alone
   * @param {{iceServers?: RTCIceServer[], onTrack?: (track: MediaStreamTrack, mid: string) => void}} [options]
   */
  constructor(handle, { iceServers = [], onTrack } = {}) {
    super();
    this.handle = handle;
    this.pc = new RTCPeerConnection({ iceServers, bundlePolicy: 'max-bundle' });
    this.pc.ontrack = (ev) => {
      const mid = ev.transceiver?.mid ?? ev.track.id;
      this.tracks.set(mid, ev.track);
      onTrack?.(ev.track, mid);
      this.emit('track', { track: ev.track, mid });
    };
    this.#trickle = trickleQueue(handle);
    this.pc.onicecandidate = (ev) => this.#trickle.push(ev.candidate);
    this.#offs.push(
      handle.on('trickle', (c) => addServerCandidate(this.pc, c)),
      handle.on('event', (e) => this.#onEvent(e)),
    );
  }

  get closed() {
    return this.#closed;
  }

  /**
   * Watches a mountpoint: sends watch, answers the plugin's offer and sends start with the answer.
   * Resolves once start is acknowledged (media follows; the "started" status says it flows).
   * @param {number} id the mountpoint
   * @param {object} [options] more watch elements: pin, media (mids to receive), substream, temporal...
   */
  async watch(id, options = {}) {
    const reply = await this.handle.message({ ...options, request: 'watch', id });
    if (reply.jsep?.type !== 'offer') throw new Error(`watch ${id}: the plugin sent no offer`);
    await this.#negotiation;
    this.mountpoint = id;
    return reply;
  }

  /** Moves to another mountpoint on the same PeerConnection (the streaming `switch` request). */
  async switchTo(id) {
    const reply = await this.handle.message({ request: 'switch', id });
    if (reply.jsep?.type === 'offer') await this.#negotiation;
    this.mountpoint = reply.data.result?.id ?? id;
    this.emit('switched', this.mountpoint);
    return reply;
  }

  /**
   * Changes what is received: {mid, send, substream, temporal, fallback, spatial_layer,
   * temporal_layer, min_delay, max_delay}; without mid it applies to every stream.
   */
  configure(settings) {
    return this.handle.message({ ...settings, request: 'configure' });
  }

  pause() {
    return this.handle.message({ request: 'pause' });
  }

  /** Resumes after pause (start without a jsep). */
  resume() {
    return this.handle.message({ request: 'start' });
  }

  /** Stops watching and closes the PeerConnection; the handle stays attached. */
  async stop() {
    try {
      if (!this.handle.detached && !this.handle.session.closed) await this.handle.message({ request: 'stop' });
    } finally {
      this.close();
    }
  }

  /** Closes the PeerConnection without a word to the server. Safe to call twice. */
  close() {
    if (this.#closed) return;
    this.#closed = true;
    for (const off of this.#offs) off();
    this.pc.close();
  }

  // Every plugin event passes here before the message() call waiting for it resumes, so an offer
  // is being answered by the time watch or switchTo looks at #negotiation.
  #onEvent(e) {
    this.emit('event', e);
    const result = e.data?.result ?? {};
    if (typeof result.status === 'string') {
      this.status = result.status;
      this.emit('status', result.status);
    }
    const layer = layerOf(result);
    if (layer) {
      const key = layer.mid ?? '';
      this.layers.set(key, { ...this.layers.get(key), ...layer });
      this.emit('layer', layer);
    }
    if (e.jsep?.type === 'offer' && !this.#closed) {
      this.#negotiation = this.#answer(e.jsep);
      this.#negotiation.catch(() => {}); // watch or switchTo reports the failure
    }
  }

  async #answer(offer) {
    await this.pc.setRemoteDescription(offer);
    const answer = await this.pc.createAnswer();
    // Chrome answers Opus in mono unless asked; keep a stereo mountpoint stereo, as Janus's demo does.
    if (/stereo=1/.test(offer.sdp) && !/stereo=1/.test(answer.sdp)) {
      answer.sdp = answer.sdp.replace('useinbandfec=1', 'useinbandfec=1;stereo=1');
    }
    await this.pc.setLocalDescription(answer);
    await this.handle.message({ request: 'start' }, this.pc.localDescription);
    // Only now has the server got the answer, so trickled candidates cannot overtake it.
    this.#trickle.flush();
  }
}

const LAYER_FIELDS = ['substream', 'temporal', 'spatial_layer', 'temporal_layer'];

/** The layer fields of a plugin result (with its mid), or null when it has none. */
function layerOf(result) {
  const layer = {};
  for (const f of LAYER_FIELDS) if (Number.isInteger(result[f])) layer[f] = result[f];
  if (Object.keys(layer).length === 0) return null;
  if (typeof result.mid === 'string') layer.mid = result.mid;
  return layer;
}

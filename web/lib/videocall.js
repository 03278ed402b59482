// A user of janus.plugin.videocall: registers a name, calls another user or answers their call,
// with one PeerConnection per call that sends the camera and microphone, plays the peer's, and
// carries a data channel that the server relays to the peer. The server makes the callee's offer
// and answers the caller's, so both sides negotiate with strata, never with each other.
//
//   const handle = await session.attach('janus.plugin.videocall');
//   const vc = new VideoCall(handle, { onTrack: (track) => show(track) });
//   vc.on('incomingcall', ({ username }) => vc.accept());
//   await vc.register('alice');
//   await vc.call('bob');            // resolves when bob accepts
//   await vc.set({ bitrate: 256000 });
//   vc.send('hello');                // over the data channel, to bob
//   await vc.hangup();

import { Emitter } from './emitter.js';
import { trickleQueue, addServerCandidate } from './webrtc.js';

/**
 * One user. Events: "incomingcall" ({username}), "accepted" ({username}), "hangup" ({username,
 * reason}), "layer" (the plugin's simulcast or svc event: {substream} or {temporal}, or
 * {spatial_layer} or {temporal_layer}), "track" (a remote MediaStreamTrack), "data" ({label, data}),
 * "event" (every plugin result, as the plugin sent it).
 */
export class VideoCall extends Emitter {
  /** @type {string|null} this user's registered name */
  username = null;
  /** @type {string|null} the other user of the call being set up or in progress */
  peer = null;
  /** @type {RTCPeerConnection|null} */
  pc = null;
  /** @type {MediaStream|null} */
  localStream = null;
  /** @type {MediaStream|null} */
  remoteStream = null;
  #incoming = null; // the offer of a call not answered yet
  #channels = new Map(); // data channels by label
  #options;

  /**
   * @param {import('./strata.js').Handle} handle a janus.plugin.videocall handle, used by this user alone
   * @param {{iceServers?: RTCIceServer[], audio?: boolean|object, video?: boolean|object,
   *          onTrack?: (track: MediaStreamTrack) => void}} [options]
   */
  constructor(handle, options = {}) {
    super();
    this.handle = handle;
    this.#options = { iceServers: [], audio: true, video: { width: { ideal: 640 }, height: { ideal: 480 } }, ...options };
    handle.on('event', (e) => this.#onEvent(e));
    handle.on('trickle', (c) => this.pc && addServerCandidate(this.pc, c));
  }

  /** The registered usernames. */
  async list() {
    const { data } = await this.handle.message({ request: 'list' });
    return data.result?.list ?? [];
  }

  /** Registers this user's name. */
  async register(username) {
    const { data } = await this.handle.message({ request: 'register', username });
    this.username = data.result?.username ?? username;
    return this.username;
  }

  /** Calls another user; resolves when they accept, rejects if they are busy or decline. */
  async call(username) {
    this.peer = username;
    const trickle = await this.#open();
    for (const track of this.localStream.getTracks()) this.pc.addTransceiver(track, { direction: 'sendrecv', streams: [this.localStream] });
    this.#channel(this.pc.createDataChannel('JanusDataChannel'));
    await this.pc.setLocalDescription(await this.pc.createOffer());
    const accepted = new Promise((resolve, reject) => {
      const offs = [
        this.on('accepted', (r) => { offs.forEach((off) => off()); resolve(r); }),
        this.on('hangup', (r) => { offs.forEach((off) => off()); reject(new Error(`call ended: ${r.reason}`)); }),
      ];
    });
    const { data } = await this.handle.message({ request: 'call', username }, this.pc.localDescription);
    trickle.flush();
    if (data.result?.event === 'hangup') this.#hungUp(data.result);
    return accepted;
  }

  /** Answers the incoming call. */
  async accept() {
    const offer = this.#incoming;
    if (!offer) throw new Error('no incoming call');
    this.#incoming = null;
    const trickle = await this.#open();
    await this.pc.setRemoteDescription(offer);
    // addTrack takes the offer's transceiver of the same kind, so the answer sends on its m-line.
    for (const track of this.localStream.getTracks()) this.pc.addTrack(track, this.localStream);
    await this.pc.setLocalDescription(await this.pc.createAnswer());
    await this.handle.message({ request: 'accept' }, this.pc.localDescription);
    trickle.flush();
  }

  /** Changes this user's settings: audio, video, bitrate, record, filename, substream, temporal... */
  async set(body) {
    await this.handle.message({ request: 'set', ...body });
  }

  /** Restarts ICE: strata answers the new offer in an "update" event. */
  async restartIce() {
    await this.pc.setLocalDescription(await this.pc.createOffer({ iceRestart: true }));
    await this.handle.message({ request: 'set', restart: true }, this.pc.localDescription);
  }

  /** Sends text (or binary) to the peer over the data channel (label: janus.js's default). */
  send(data, label = 'JanusDataChannel') {
    const dc = this.#channels.get(label);
    if (!dc || dc.readyState !== 'open') throw new Error(`data channel ${label} is not open`);
    dc.send(data);
  }

  /** Ends the call (or declines the incoming one). */
  async hangup() {
    this.#incoming = null;
    try {
      await this.handle.message({ request: 'hangup' });
    } finally {
      this.#close();
    }
  }

  async #open() {
    this.#close();
    const { iceServers, audio, video, onTrack } = this.#options;
    this.localStream = await navigator.mediaDevices.getUserMedia({ audio, video });
    this.remoteStream = new MediaStream();
    const pc = (this.pc = new RTCPeerConnection({ iceServers, bundlePolicy: 'max-bundle' }));
    pc.ontrack = (ev) => {
      this.remoteStream.addTrack(ev.track);
      onTrack?.(ev.track);
      this.emit('track', ev.track);
    };
    pc.ondatachannel = (ev) => this.#channel(ev.channel);
    const trickle = trickleQueue(this.handle);
    pc.onicecandidate = (ev) => trickle.push(ev.candidate);
    return trickle;
  }

  #channel(dc) {
    if (!this.#channels.has(dc.label)) this.#channels.set(dc.label, dc);
    dc.onmessage = (ev) => this.emit('data', { label: dc.label, data: ev.data });
  }

  #close() {
    for (const t of this.localStream?.getTracks() ?? []) t.stop();
    this.pc?.close();
    this.pc = null;
    this.localStream = null;
    this.#channels.clear();
  }

  #hungUp(result) {
    this.#close();
    this.peer = null;
    this.emit('hangup', result);
  }

  async #onEvent(e) {
    const result = e.data.result;
    if (!result) return;
    this.emit('event', result);
    switch (result.event) {
      case 'incomingcall':
        this.#incoming = e.jsep;
        this.peer = result.username;
        this.emit('incomingcall', result);
        break;
      case 'accepted':
        if (e.jsep && this.pc) await this.pc.setRemoteDescription(e.jsep);
        this.emit('accepted', result);
        break;
      case 'update':
        if (e.jsep?.type === 'answer' && this.pc) await this.pc.setRemoteDescription(e.jsep);
        break;
      case 'hangup':
        this.#incoming = null;
        this.#hungUp(result);
        break;
      case 'simulcast':
      case 'svc':
        this.emit('layer', result);
        break;
    }
  }
}

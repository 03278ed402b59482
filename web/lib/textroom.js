// A participant of janus.plugin.textroom: text rooms over a data channel. The server makes the
// offer (`setup`), with a data section only; the participant opens the data channel, answers with
// `ack`, and from then on its requests ("textroom": join, message, leave, ...) and the room's events travel as JSON on
// the data channel, each request matched to its reply by "transaction".
//
//   const handle = await session.attach('janus.plugin.textroom');
//   const room = new TextRoom(handle);
//   room.on('message', (m) => console.log(m.from, m.text, m.whisper));
//   await room.setup();
//   const { participants } = await room.join(1234, 'alice', { display: 'Alice' });
//   await room.send(1234, 'hello everyone');
//   await room.send(1234, 'just you', { to: 'bob' });
//   await room.leave(1234);
//   room.close();

import { Emitter } from './emitter.js';
import { trickleQueue, addServerCandidate } from './webrtc.js';
import { JanusError } from './strata.js';

/** The room events a TextRoom emits under their own name (Janus's "textroom" values). */
const EVENTS = ['message', 'announcement', 'join', 'leave', 'kicked', 'destroyed'];

/**
 * One participant's data channel to the text rooms. Events: "open" (the data channel is up),
 * "close", one per room event ("message" {room, from, date, text, whisper?, display?},
 * "announcement" {room, date, text}, "join" {room, username, display?}, "leave" {room, username},
 * "kicked" {room, username}, "destroyed" {room}), "error" (an error the server sent for no pending
 * request: a message that was not JSON, say) and "data" (everything the server sends, parsed).
 */
export class TextRoom extends Emitter {
  /** @type {RTCDataChannel|null} the channel requests go on, once it is open */
  channel = null;
  #pending = new Map(); // transaction → {resolve, reject, timer}
  #offs = [];
  #trickle;
  #closed = false;
  #timeoutMs;

  /**
   * @param {import('./strata.js').Handle} handle a janus.plugin.textroom handle, used by this participant alone
   * @param {{iceServers?: RTCIceServer[], requestTimeoutMs?: number}} [options]
   */
  constructor(handle, { iceServers = [], requestTimeoutMs = 10000 } = {}) {
    super();
    this.handle = handle;
    this.#timeoutMs = requestTimeoutMs;
    this.pc = new RTCPeerConnection({ iceServers, bundlePolicy: 'max-bundle' });
    this.#trickle = trickleQueue(handle);
    this.pc.onicecandidate = (ev) => this.#trickle.push(ev.candidate);
    this.#offs.push(handle.on('trickle', (c) => addServerCandidate(this.pc, c)));
  }

  get closed() {
    return this.#closed;
  }

  /**
   * Sends setup and answers the server's offer with ack, opening the data channel as janus.js does
   * (a Janus server opens none of its own); resolves once the channel is open.
   */
  async setup() {
    const dc = this.pc.createDataChannel('JanusDataChannel');
    const opened = new Promise((resolve, reject) => {
      dc.onopen = () => {
        this.channel = dc;
        this.emit('open');
        resolve();
      };
      this.pc.addEventListener('connectionstatechange', () => {
        if (this.pc.connectionState === 'failed') reject(new Error('the PeerConnection failed'));
      });
    });
    this.#listen(dc);
    // A server may open channels too (Janus does when it must send before the client opened one):
    // what arrives on them is handled alike.
    this.pc.ondatachannel = (ev) => this.#listen(ev.channel);
    const { jsep } = await this.handle.message({ request: 'setup' });
    if (jsep?.type !== 'offer') throw new Error('textroom setup: the plugin sent no offer');
    await this.pc.setRemoteDescription(jsep);
    await this.pc.setLocalDescription(await this.pc.createAnswer());
    await this.handle.message({ request: 'ack' }, this.pc.localDescription);
    // Only now has the server got the answer, so trickled candidates cannot overtake it.
    this.#trickle.flush();
    await opened;
  }

  /**
   * Sends a request on the data channel ({textroom: 'list'}, ...) and resolves with the reply; a
   * "textroom": "error" reply rejects with a JanusError. With ack false (message), it resolves at once.
   * @param {object} body the request without its transaction
   */
  request(body) {
    if (!this.channel || this.channel.readyState !== 'open') return Promise.reject(new Error('textroom: not set up'));
    const transaction = crypto.randomUUID();
    this.channel.send(JSON.stringify({ ...body, transaction }));
    if (body.ack === false) return Promise.resolve({ textroom: 'success' });
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#pending.delete(transaction);
        reject(new Error(`textroom: no reply to ${body.textroom} within ${this.#timeoutMs} ms`));
      }, this.#timeoutMs);
      this.#pending.set(transaction, { resolve, reject, timer });
    });
  }

  /**
   * Joins a room; resolves with the reply, whose participants are those already in it.
   * @param {number|string} room
   * @param {string} username unique in the room
   * @param {{display?: string, pin?: string, token?: string, history?: boolean}} [options]
   */
  join(room, username, options = {}) {
    return this.request({ ...options, textroom: 'join', room, username });
  }

  /** Leaves a room. */
  leave(room) {
    return this.request({ textroom: 'leave', room });
  }

  /**
   * Sends text to the room, or only to some: {to: 'bob'} or {tos: ['bob', 'carol']} (a whisper;
   * the reply's "sent" says who got it). {ack: false} asks for no reply.
   */
  send(room, text, options = {}) {
    return this.request({ ...options, textroom: 'message', room, text });
  }

  /** Closes the PeerConnection without a word to the server. Safe to call twice. */
  close() {
    if (this.#closed) return;
    this.#closed = true;
    for (const off of this.#offs) off();
    this.#failPending(new Error('textroom: closed'));
    this.pc.close();
  }

  #listen(dc) {
    dc.onmessage = (m) => this.#onData(m.data);
    dc.onclose = () => {
      if (this.channel === dc) this.#failPending(new Error('the data channel closed'));
      this.emit('close');
    };
  }

  #onData(text) {
    let msg;
    try {
      msg = JSON.parse(text);
    } catch {
      console.warn('textroom: not JSON from the server', text);
      return;
    }
    this.emit('data', msg);
    const waiter = msg.transaction && this.#pending.get(msg.transaction);
    if (waiter) {
      clearTimeout(waiter.timer);
      this.#pending.delete(msg.transaction);
      if (msg.textroom === 'error') waiter.reject(new JanusError(msg.error_code, msg.error ?? '', this.handle.plugin));
      else waiter.resolve(msg);
      return;
    }
    if (msg.textroom === 'error') this.emit('error', new JanusError(msg.error_code, msg.error ?? '', this.handle.plugin));
    else if (EVENTS.includes(msg.textroom)) this.emit(msg.textroom, msg);
  }

  #failPending(err) {
    for (const w of this.#pending.values()) {
      clearTimeout(w.timer);
      w.reject(err);
    }
    this.#pending.clear();
  }
}

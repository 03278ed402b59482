// One low-priority transfer on one RTCDataChannel: the glue between the channel and the protocol
// endpoint of lowprio.wasm (internal/lowprio). lib/lowprio.js creates these; see there for the API.
//
// The endpoint is passive: every call takes the time, and poll() says when it wants to be called
// again. This driver owns the clock (performance.now()), one timer set from poll's answer, the
// channel's messages and its bufferedAmount: it polls only while bufferedAmount is below a few
// messages, so the bytes waiting in the browser stay near zero and LEDBAT's window, not SCTP's
// buffer, decides what is in the network.

import { Emitter } from './emitter.js';

const CHUNK = 64 << 10; // bytes moved between the application and the endpoint per step
const HELD = 4; // messages bufferedAmount may hold before polling waits for it to drain
const LINGER_MS = 10000; // a finished receiver keeps answering a sender's FIN retransmissions this long
const IDLE_MS = 30000; // the protocol's default idle timeout

/**
 * Progress of a transfer.
 * @typedef {object} Progress
 * @property {number} bytes        sent and acknowledged in order (sender), or received in order (receiver)
 * @property {number|null} total   the stream's length when known (a Blob, a buffer, gen:<n>)
 * @property {number} rateBps      goodput over the last interval, bit/s
 * @property {number|null} rttMs   the sender's smoothed RTT
 * @property {number|null} queueDelayMs the one-way queuing delay: LEDBAT's estimate at a sender, the
 *   DATA timestamps' (lowprio.QueueMeter) at a receiver
 * @property {number|null} cwnd    LEDBAT's window, bytes (sender)
 * @property {number} retransmits  (sender)
 * @property {number} elapsedMs    since the channel opened
 */

/**
 * A transfer. Events: "open", "progress" (Progress, every progressMs and at the end), "done"
 * (the result: {bytes, elapsedMs, blob?, verified?}), "error" (Error). `finished` is a promise of
 * the result. abort(reason) ends it with a RESET carrying reason.
 */
export class Transfer extends Emitter {
  /** "get" or "put", from the channel's label */
  verb;
  /** the stream's name */
  name;
  /** "send" or "receive": what this end does */
  role;
  /** @type {RTCDataChannel} */
  channel;
  /** @type {Progress|null} */
  progress = null;
  /** @type {Promise<object>} */
  finished;
  state = 'connecting'; // "connecting" | "running" | "done" | "error"
  error = null;

  #ep;
  #opts;
  #source;
  #sink;
  #timer = null;
  #started = 0;
  #last = { at: 0, bytes: 0 };
  #pending = null; // bytes read from the source, not yet taken by the endpoint
  #reading = false;
  #sourceDone = false;
  #lingerTimer = null;
  #heard = false;
  #resolve;
  #reject;

  constructor(api, channel, { verb, name, role, source, sink, total = null, ...opts }) {
    super();
    Object.assign(this, { verb, name, role, channel });
    this.#opts = { progressMs: 250, ...opts };
    this.total = total;
    this.#source = source;
    this.#sink = sink;
    this.finished = new Promise((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
    this.finished.catch(() => {}); // callers that use events only must not see an unhandled rejection
    const ep = role === 'send' ? api.newSender(opts) : api.newReceiver(opts);
    if (ep.error && typeof ep.error === 'string') {
      queueMicrotask(() => this.#fail(new Error(ep.error)));
      channel.close();
      return;
    }
    this.#ep = ep;
    channel.binaryType = 'arraybuffer';
    channel.bufferedAmountLowThreshold = opts.maxMessage ?? 1100;
    channel.addEventListener('message', (ev) => this.#onMessage(ev.data));
    channel.addEventListener('bufferedamountlow', () => this.#step());
    channel.addEventListener('close', () => this.#onClose());
    if (channel.readyState === 'open') queueMicrotask(() => this.#onOpen());
    else channel.addEventListener('open', () => this.#onOpen(), { once: true });
  }

  /** Ends the transfer: the peer gets a RESET carrying reason. */
  abort(reason = 'aborted by the application') {
    if (!this.#ep || this.state === 'done' || this.state === 'error') return;
    this.#ep.abort(String(reason));
    this.#step();
  }

  #onOpen() {
    if (this.state !== 'connecting') return;
    this.state = 'running';
    this.#started = performance.now();
    this.#last = { at: this.#started, bytes: 0 };
    this.emit('open', this);
    if (this.role === 'receive') {
      // The protocol's receiver starts its idle clock at the first message; a peer that never
      // sends one (no lowprio service behind the channel) must not leave the transfer hanging.
      const idle = this.#opts.idleTimeoutMs ?? IDLE_MS;
      setTimeout(() => this.#heard || this.abort(`nothing from the sender in ${idle / 1000} s`), idle);
    }
    this.#step();
  }

  #onMessage(data) {
    if (!this.#ep) return;
    this.#heard = true;
    if (typeof data === 'string') {
      this.#ep.abort('text message on a lowprio channel');
    } else {
      const err = this.#ep.onMessage(new Uint8Array(data), performance.now());
      // A message for another transfer or of the wrong kind is not fatal to the core; on a
      // channel that carries exactly one transfer it is malformed, so the transfer ends.
      if (err && !this.#ep.error()) this.#ep.abort(err);
    }
    if (this.role === 'receive') this.#drain();
    this.#step();
  }

  #onClose() {
    clearTimeout(this.#timer);
    clearTimeout(this.#lingerTimer);
    if (this.state === 'done' || this.state === 'error') {
      this.#free();
      return;
    }
    this.#fail(new Error(`lowprio: the data channel closed before the transfer finished (${this.#bytes()} bytes)`));
  }

  /** Polls the endpoint (when the channel has room), sends what it emits, and sets the timer. */
  #step() {
    if (!this.#ep || this.state === 'connecting') return;
    clearTimeout(this.#timer);
    this.#timer = null;
    if (this.role === 'send' && this.state === 'running') this.#fill();
    const ch = this.channel;
    if (ch.readyState !== 'open') return;
    if (ch.bufferedAmount > HELD * ch.bufferedAmountLowThreshold) return; // bufferedamountlow steps again
    const now = performance.now();
    const next = this.#ep.poll(now, (msg) => sendQuietly(ch, msg));
    this.#report(now, false);
    if (this.#checkEnd()) return;
    if (next >= 0) this.#timer = setTimeout(() => this.#step(), Math.max(0, next - now));
  }

  /** Moves source bytes into the sender's buffer; reads the source ahead, asynchronously if it must. */
  #fill() {
    while (this.#pending) {
      const n = this.#ep.write(this.#pending);
      if (n === 0) return; // the send buffer is full: acknowledgements make room
      this.#pending = n < this.#pending.length ? this.#pending.subarray(n) : null;
    }
    if (this.#sourceDone || this.#reading) return;
    let got;
    try {
      got = this.#source.read(CHUNK);
    } catch (err) {
      this.abort(`reading the source: ${err.message ?? err}`);
      return;
    }
    if (got instanceof Promise) {
      this.#reading = true;
      got.then(
        (chunk) => {
          this.#reading = false;
          if (!this.#ep) return; // the transfer ended meanwhile
          this.#took(chunk);
          this.#step();
        },
        (err) => {
          this.#reading = false;
          this.abort(`reading the source: ${err.message ?? err}`);
        },
      );
      return;
    }
    this.#took(got);
    if (this.#pending) this.#fill();
  }

  #took(chunk) {
    if (chunk == null) {
      this.#sourceDone = true;
      this.#ep.close(); // the FIN follows the last byte
    } else if (chunk.length > 0) {
      this.#pending = chunk;
    }
  }

  /** Hands every in-order byte to the sink; at the end of the stream, finishes. */
  #drain() {
    for (;;) {
      const chunk = this.#ep.read(CHUNK);
      if (chunk === null) {
        if (!this.#ep.error() && this.state === 'running') this.#finishReceive();
        return;
      }
      if (chunk.length === 0) return;
      try {
        this.#sink.write(chunk);
      } catch (err) {
        this.#ep.abort(`the receiving application failed: ${err.message ?? err}`);
        return;
      }
    }
  }

  #finishReceive() {
    let extra;
    try {
      extra = this.#sink.close();
    } catch (err) {
      this.#ep.abort(`${err.message ?? err}`);
      return;
    }
    this.#finish(extra);
    // Keep answering until the sender, which saw our ACK of its FIN, closes the channel.
    this.#lingerTimer = setTimeout(() => this.channel.close(), LINGER_MS);
  }

  /** Ends the transfer on an error or, for a sender, once the FIN is acknowledged. */
  #checkEnd() {
    const err = this.#ep.error();
    if (err) {
      this.#fail(new Error(err));
      this.channel.close(); // after the RESET poll just sent: close delivers what is buffered
      return true;
    }
    if (this.role === 'send' && this.state === 'running' && this.#ep.done()) {
      this.#finish({});
      this.channel.close();
      return true;
    }
    return false;
  }

  #bytes() {
    if (!this.#ep) return 0;
    return this.role === 'send' ? this.#ep.stats().acked : this.#ep.received();
  }

  #report(now, force) {
    if (!force && now - this.#last.at < this.#opts.progressMs) return;
    const bytes = this.#bytes();
    const dt = (now - this.#last.at) / 1000;
    const st = this.role === 'send' ? this.#ep.stats() : null;
    this.progress = {
      bytes,
      total: this.total,
      rateBps: dt > 0 ? ((bytes - this.#last.bytes) * 8) / dt : 0,
      rttMs: st ? st.rttMs : null,
      queueDelayMs: st ? st.queueDelayMs : this.#ep.queueDelayMs(),
      cwnd: st ? st.cwnd : null,
      retransmits: st ? st.retransmits : 0,
      elapsedMs: now - this.#started,
    };
    this.#last = { at: now, bytes };
    this.emit('progress', this.progress);
  }

  #finish(extra) {
    const now = performance.now();
    this.#report(now, true);
    this.state = 'done';
    const result = { bytes: this.#bytes(), elapsedMs: now - this.#started, ...extra };
    this.emit('done', result);
    this.#resolve(result);
  }

  #fail(err) {
    if (this.state === 'done' || this.state === 'error') return;
    this.state = 'error';
    this.error = err;
    clearTimeout(this.#timer);
    this.emit('error', err);
    this.#reject(err);
    if (this.channel.readyState === 'closed') this.#free();
  }

  #free() {
    this.#ep?.free();
    this.#ep = null;
  }
}

/**
 * Sends one message the endpoint emitted. An exception must not reach the WebAssembly module that
 * called this (it would stop the Go runtime, and every transfer of the page with it); a channel
 * that cannot send any more ends the transfer through its close event.
 */
export function sendQuietly(ch, msg) {
  try {
    ch.send(msg);
  } catch (err) {
    console.warn('lowprio: send failed', err);
  }
}

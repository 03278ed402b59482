// strata.js: strata's client library for the Janus API. An ES module with no dependencies and no
// build step. It talks to any Janus-compatible server over HTTP long-poll or a WebSocket.
//
//   import { connect } from '/lib/strata.js';
//   const session = await connect('http://localhost:8088/janus');   // or 'ws://localhost:8188'
//   const echo = await session.attach('janus.plugin.echotest');
//   echo.on('webrtcup', () => console.log('media is flowing'));
//   const { data, jsep } = await echo.message({ audio: true, video: true }, offer);
//
// See docs/CLIENT.md for the whole API.

import { Emitter } from './emitter.js';
import { newTransport, TransportError } from './transport.js';

export { TransportError } from './transport.js';
export { startCall, Call } from './webrtc.js';
export { StatsSampler, summarizeStats } from './stats.js';
export { resolveServer } from './server.js';
export { StreamViewer, listMountpoints } from './streaming.js';
export { TextRoom } from './textroom.js';
export { VideoCall } from './videocall.js';

/** A Janus core error (`{"janus":"error"}`) or a plugin error (`error_code` inside plugindata). */
export class JanusError extends Error {
  /**
   * @param {number} code   Janus error code, e.g. 458 (no such session) or 413 (a plugin's own code)
   * @param {string} reason the server's text
   * @param {string} [plugin] set for plugin errors: the plugin that raised it
   */
  constructor(code, reason, plugin) {
    super(`${plugin ? `${plugin} error` : 'Janus error'} ${code}: ${reason}`);
    this.name = 'JanusError';
    this.code = code;
    this.reason = reason;
    this.plugin = plugin;
  }
}

const DEFAULTS = {
  keepaliveMs: 25000, // janus.js's period; the server's session timeout is 60 s by default
  maxEvents: 10, // events per long-poll reply
  longPollTimeoutMs: 60000, // the server holds a poll for 30 s, so this only catches dead servers
  requestTimeoutMs: 30000,
  eventTimeoutMs: 60000, // how long message() waits for the event that follows an ack
  token: undefined,
  apisecret: undefined,
};

function newTransaction() {
  const bytes = crypto.getRandomValues(new Uint8Array(9));
  return btoa(String.fromCharCode(...bytes)).replace(/[+/=]/g, 'x');
}

/**
 * Connects to a Janus API server and creates a session.
 * @param {string} url "http(s)://host:port/janus" for HTTP long-poll, "ws(s)://host:port" for WebSocket
 * @param {object} [options] keepaliveMs, maxEvents, longPollTimeoutMs, requestTimeoutMs, eventTimeoutMs, token, apisecret
 * @returns {Promise<Session>}
 */
export async function connect(url, options = {}) {
  const opts = { ...DEFAULTS, ...options };
  const session = new Session(url, opts);
  await session._open();
  return session;
}

/**
 * One Janus session. Events: "message" (every message the server pushes, raw), "timeout" (the server
 * expired the session), "disconnected" (the transport failed; carries the error), "destroyed",
 * "error" (a core error that belongs to no request).
 */
export class Session extends Emitter {
  /** @type {number|undefined} the session id the server assigned */
  id;
  /** "http" or "ws" */
  transport;
  #opts;
  #transport;
  #handles = new Map();
  #eventWaiters = new Map();
  #keepaliveTimer = null;
  #closed = false;
  #destroying = false;

  constructor(url, opts) {
    super();
    this.url = url;
    this.#opts = opts;
    const authQuery =
      (opts.token ? `&token=${encodeURIComponent(opts.token)}` : '') +
      (opts.apisecret ? `&apisecret=${encodeURIComponent(opts.apisecret)}` : '');
    this.#transport = newTransport(url, {
      ...opts,
      authQuery,
      onEvent: (msg) => this.#dispatch(msg),
      // While our own destroy is in flight the server may end the long-poll first: that is no loss.
      onLost: (err) => {
        if (!this.#destroying) this.#teardown('disconnected', err);
      },
    });
    this.transport = this.#transport.kind;
  }

  get closed() {
    return this.#closed;
  }

  async _open() {
    await this.#transport.open();
    const reply = await this._request({ janus: 'create' }, {});
    this.id = reply.data.id;
    this.#transport.startEvents(this.id);
    this.#keepaliveTimer = setInterval(() => this.#keepalive(), this.#opts.keepaliveMs);
  }

  /** The server's `info` reply (name, version, plugins, transports...). */
  info() {
    return this._request({ janus: 'info' }, {});
  }

  /**
   * Attaches to a plugin.
   * @param {string} plugin e.g. "janus.plugin.echotest"
   * @param {{opaqueId?: string}} [options]
   * @returns {Promise<Handle>}
   */
  async attach(plugin, { opaqueId } = {}) {
    const msg = { janus: 'attach', plugin };
    if (opaqueId) msg.opaque_id = opaqueId;
    const reply = await this._request(msg, { sessionId: this.id });
    const handle = new Handle(this, reply.data.id, plugin);
    this.#handles.set(handle.id, handle);
    return handle;
  }

  /** Destroys the session on the server and stops keepalives and polling. Safe to call twice. */
  async destroy() {
    if (this.#closed) return;
    this.#destroying = true;
    // Stop polling first: the poll would otherwise outlive the session and end in an error.
    this.#transport.stopEvents();
    try {
      await this._request({ janus: 'destroy' }, { sessionId: this.id });
    } finally {
      this.#teardown('destroyed');
    }
  }

  /**
   * Sends one request and resolves with the server's synchronous reply; a core error rejects with a
   * JanusError. Used by Handle; exported for requests the library does not wrap.
   */
  async _request(msg, ids) {
    if (this.#closed) throw new TransportError('session is closed');
    const full = { ...msg, transaction: msg.transaction ?? newTransaction() };
    if (this.#opts.token) full.token = this.#opts.token;
    if (this.#opts.apisecret) full.apisecret = this.#opts.apisecret;
    const reply = await this.#transport.request(full, ids);
    if (reply.janus === 'error') {
      throw new JanusError(reply.error?.code ?? 0, reply.error?.reason ?? 'unknown error');
    }
    return reply;
  }

  /**
   * Registers interest in the `event` that will carry transaction, before the request is sent: an
   * event may arrive before its ack.
   */
  _awaitEvent(transaction) {
    let waiter;
    const promise = new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#eventWaiters.delete(transaction);
        reject(new TransportError(`no event for transaction ${transaction} within ${this.#opts.eventTimeoutMs} ms`));
      }, this.#opts.eventTimeoutMs);
      waiter = { resolve, reject, timer };
      this.#eventWaiters.set(transaction, waiter);
    });
    const cancel = () => {
      clearTimeout(waiter.timer);
      this.#eventWaiters.delete(transaction);
    };
    return { promise, cancel };
  }

  _forget(handleId) {
    this.#handles.delete(handleId);
  }

  async #keepalive() {
    try {
      await this._request({ janus: 'keepalive' }, { sessionId: this.id });
    } catch (err) {
      if (err instanceof JanusError && err.code === 458) this.#teardown('disconnected', err);
    }
  }

  #dispatch(msg) {
    this.emit('message', msg);
    if (msg.janus === 'timeout') {
      this.#teardown('timeout');
      return;
    }
    const waiter = msg.janus === 'event' && msg.transaction && this.#eventWaiters.get(msg.transaction);
    if (waiter) {
      clearTimeout(waiter.timer);
      this.#eventWaiters.delete(msg.transaction);
      waiter.resolve(msg);
    }
    const handle = msg.sender && this.#handles.get(msg.sender);
    if (handle) {
      handle._dispatch(msg);
    } else if (msg.janus === 'error') {
      this.emit('error', new JanusError(msg.error?.code ?? 0, msg.error?.reason ?? 'unknown error'));
    }
  }

  #teardown(reason, err) {
    if (this.#closed) return;
    this.#closed = true;
    clearInterval(this.#keepaliveTimer);
    this.#transport.close();
    const gone = err ?? new TransportError(`session ${reason}`);
    for (const waiter of this.#eventWaiters.values()) {
      clearTimeout(waiter.timer);
      waiter.reject(gone);
    }
    this.#eventWaiters.clear();
    for (const handle of this.#handles.values()) handle._dispatch({ janus: 'detached', sender: handle.id });
    this.#handles.clear();
    this.emit(reason, err);
  }
}

/**
 * A handle: one attachment to a plugin. Events: "webrtcup", "media" ({type, mid, receiving}),
 * "slowlink" ({media, uplink, lost}), "hangup" ({reason}), "detached", "trickle" (a server
 * candidate, full-trickle servers only) and "event" ({data, jsep, plugin, transaction, raw}) for
 * plugin events that no message() call is waiting for as well as those it is.
 */
export class Handle extends Emitter {
  constructor(session, id, plugin) {
    super();
    this.session = session;
    this.id = id;
    this.plugin = plugin;
    this.detached = false;
  }

  /**
   * Sends a message to the plugin. Resolves with {data, jsep, plugin, raw}: from the `success` reply
   * of a synchronous request, or from the `event` with the same transaction after an `ack`. Core
   * errors and plugin errors (error_code in the plugin data) reject with a JanusError.
   * @param {object} body the plugin request
   * @param {{type: string, sdp: string}} [jsep]
   */
  async message(body, jsep) {
    const transaction = newTransaction();
    const waiter = this.session._awaitEvent(transaction);
    let reply;
    try {
      const msg = { janus: 'message', transaction, body };
      if (jsep) msg.jsep = { type: jsep.type, sdp: jsep.sdp };
      reply = await this.#request(msg);
    } catch (err) {
      waiter.cancel();
      throw err;
    }
    if (reply.janus === 'success') {
      waiter.cancel();
      return pluginResult(reply);
    }
    return pluginResult(await waiter.promise);
  }

  /**
   * Trickles local ICE candidates: an RTCIceCandidate (or its JSON), an array of them, or
   * null/undefined for end-of-candidates.
   */
  trickle(candidate) {
    const msg = { janus: 'trickle' };
    if (candidate == null) msg.candidate = { completed: true };
    else if (Array.isArray(candidate)) msg.candidates = candidate.map(candidateJSON);
    else msg.candidate = candidateJSON(candidate);
    return this.#request(msg);
  }

  /** Closes the PeerConnection on the server; the handle stays attached. */
  hangup() {
    return this.#request({ janus: 'hangup' });
  }

  /** Detaches from the plugin. */
  async detach() {
    if (this.detached) return;
    await this.#request({ janus: 'detach' });
    this._dispatch({ janus: 'detached', sender: this.id });
  }

  #request(msg) {
    return this.session._request(msg, { sessionId: this.session.id, handleId: this.id });
  }

  _dispatch(msg) {
    switch (msg.janus) {
      case 'webrtcup':
        this.emit('webrtcup', msg);
        break;
      case 'media':
        this.emit('media', msg);
        break;
      case 'slowlink':
        this.emit('slowlink', msg);
        break;
      case 'hangup':
        this.emit('hangup', msg);
        break;
      case 'trickle':
        this.emit('trickle', msg.candidate);
        break;
      case 'detached':
        if (this.detached) return;
        this.detached = true;
        this.session._forget(this.id);
        this.emit('detached', msg);
        break;
      case 'event':
        this.emit('event', eventValue(msg));
        break;
      default:
        this.emit(msg.janus, msg);
    }
  }
}

function eventValue(msg) {
  return {
    data: msg.plugindata?.data ?? {},
    plugin: msg.plugindata?.plugin,
    jsep: msg.jsep,
    transaction: msg.transaction,
    raw: msg,
  };
}

function pluginResult(msg) {
  const value = eventValue(msg);
  if (value.data.error_code) throw new JanusError(value.data.error_code, value.data.error ?? '', value.plugin);
  return value;
}

function candidateJSON(c) {
  if (typeof c.toJSON === 'function') c = c.toJSON();
  if (c.completed) return { completed: true };
  return { candidate: c.candidate, sdpMid: c.sdpMid, sdpMLineIndex: c.sdpMLineIndex };
}

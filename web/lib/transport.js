// The two ways to reach the Janus API: HTTP (POST per request, long-poll GET for events) and a
// WebSocket with the `janus-protocol` subprotocol. Both offer the same small interface to Session:
//
//   open()                         → Promise, resolved once requests can be sent
//   request(msg, {sessionId, handleId}) → Promise of the synchronous reply (success, ack, error, ...)
//   startEvents(sessionId)         → begin delivering events to onEvent
//   stopEvents()                   → stop asking for events (before destroying the session)
//   close()
//
// onEvent(msg) receives every message that is not the reply to a request; onLost(err) is called
// once when the transport cannot reach the server any more.

/** Reply types that answer a request directly (as opposed to events pushed later). */
const REPLY_TYPES = new Set(['success', 'error', 'ack', 'pong', 'server_info']);

/** Raised when the server cannot be reached or answers with something that is not the Janus API. */
export class TransportError extends Error {
  constructor(message, { status, cause } = {}) {
    super(message, { cause });
    this.name = 'TransportError';
    this.status = status;
  }
}

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** fetch with a timeout that aborts the request; resolves with the parsed JSON body. */
async function fetchJSON(url, init, timeoutMs, outerSignal) {
  const ctrl = new AbortController();
  const timer = setTimeout(() => ctrl.abort(new TransportError(`request timed out after ${timeoutMs} ms`)), timeoutMs);
  const abortOuter = () => ctrl.abort(outerSignal.reason);
  outerSignal?.addEventListener('abort', abortOuter);
  try {
    const res = await fetch(url, { ...init, signal: ctrl.signal, cache: 'no-store' });
    const text = await res.text();
    let body;
    try {
      body = JSON.parse(text);
    } catch {
      throw new TransportError(`HTTP ${res.status} from ${url}: not JSON`, { status: res.status });
    }
    // Janus answers API errors with a JSON body; only a body without "janus" is a transport failure.
    if (!res.ok && !(body && (body.janus || Array.isArray(body)))) {
      throw new TransportError(`HTTP ${res.status} from ${url}`, { status: res.status });
    }
    return body;
  } catch (err) {
    if (err instanceof TransportError) throw err;
    throw new TransportError(`cannot reach ${url}: ${ctrl.signal.reason?.message ?? err.message}`, { cause: err });
  } finally {
    clearTimeout(timer);
    outerSignal?.removeEventListener('abort', abortOuter);
  }
}

export class HttpTransport {
  #url;
  #opts;
  #closed = false;
  #pollAbort = null;

  /**
   * @param {string} url  base URL of the API, e.g. "http://host:8088/janus"
   * @param {object} opts {onEvent, onLost, maxEvents, longPollTimeoutMs, requestTimeoutMs, authQuery}
   */
  constructor(url, opts) {
    this.#url = url.replace(/\/+$/, '');
    this.#opts = opts;
    this.kind = 'http';
  }

  async open() {}

  request(msg, { sessionId, handleId } = {}) {
    let path = this.#url;
    if (sessionId) path += `/${sessionId}`;
    if (handleId) path += `/${handleId}`;
    const init = { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(msg) };
    return fetchJSON(path, init, this.#opts.requestTimeoutMs);
  }

  startEvents(sessionId) {
    this.#pollLoop(sessionId);
  }

  /** Ends the long-poll loop (the server may answer a poll of a destroyed session with an error). */
  stopEvents() {
    this.close();
  }

  close() {
    this.#closed = true;
    this.#pollAbort?.abort(new TransportError('closed'));
  }

  async #pollLoop(sessionId) {
    const { maxEvents, longPollTimeoutMs, authQuery } = this.#opts;
    let failures = 0;
    while (!this.#closed) {
      this.#pollAbort = new AbortController();
      const url = `${this.#url}/${sessionId}?rid=${Date.now()}&maxev=${maxEvents}${authQuery ?? ''}`;
      try {
        const body = await fetchJSON(url, { method: 'GET' }, longPollTimeoutMs, this.#pollAbort.signal);
        failures = 0;
        for (const msg of Array.isArray(body) ? body : [body]) {
          if (msg.janus === 'error' && msg.error?.code === 458) {
            throw new TransportError(msg.error.reason ?? 'session not found', { status: 458 });
          }
          if (msg.janus !== 'keepalive') this.#opts.onEvent(msg);
        }
      } catch (err) {
        if (this.#closed) return;
        failures++;
        // A vanished session will not come back; network hiccups get three retries with backoff.
        if (err.status === 458 || err.status === 404 || failures > 3) {
          this.#closed = true;
          this.#opts.onLost(err);
          return;
        }
        await sleep(250 * 2 ** failures);
      }
    }
  }
}

export class WsTransport {
  #url;
  #opts;
  #ws = null;
  #pending = new Map();
  #closed = false;

  constructor(url, opts) {
    this.#url = url;
    this.#opts = opts;
    this.kind = 'ws';
  }

  open() {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(this.#url, 'janus-protocol');
      this.#ws = ws;
      let opened = false;
      ws.onopen = () => {
        opened = true;
        resolve();
      };
      ws.onerror = () => {
        if (!opened) reject(new TransportError(`cannot open WebSocket ${this.#url}`));
      };
      ws.onclose = (ev) => this.#onClose(ev, opened);
      ws.onmessage = (ev) => this.#onMessage(ev.data);
    });
  }

  request(msg, { sessionId, handleId } = {}) {
    if (this.#closed || this.#ws?.readyState !== WebSocket.OPEN) {
      return Promise.reject(new TransportError('WebSocket is not open'));
    }
    const full = { ...msg };
    if (sessionId) full.session_id = sessionId;
    if (handleId) full.handle_id = handleId;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#pending.delete(msg.transaction);
        reject(new TransportError(`no reply to "${msg.janus}" within ${this.#opts.requestTimeoutMs} ms`));
      }, this.#opts.requestTimeoutMs);
      this.#pending.set(msg.transaction, { resolve, reject, timer });
      this.#ws.send(JSON.stringify(full));
    });
  }

  startEvents() {}

  stopEvents() {}

  close() {
    this.#closed = true;
    this.#failPending(new TransportError('closed'));
    this.#ws?.close(1000);
  }

  #onMessage(data) {
    let msg;
    try {
      msg = JSON.parse(data);
    } catch {
      console.warn('strata: ignoring a WebSocket message that is not JSON');
      return;
    }
    const pending = REPLY_TYPES.has(msg.janus) && this.#pending.get(msg.transaction);
    if (pending) {
      this.#pending.delete(msg.transaction);
      clearTimeout(pending.timer);
      pending.resolve(msg);
      return;
    }
    this.#opts.onEvent(msg);
  }

  #onClose(ev, opened) {
    if (this.#closed || !opened) return;
    this.#closed = true;
    const err = new TransportError(`WebSocket closed (code ${ev.code}${ev.reason ? `, ${ev.reason}` : ''})`);
    this.#failPending(err);
    this.#opts.onLost(err);
  }

  #failPending(err) {
    for (const { reject, timer } of this.#pending.values()) {
      clearTimeout(timer);
      reject(err);
    }
    this.#pending.clear();
  }
}

/** Picks the transport from the URL scheme: ws:// and wss:// use the WebSocket, anything else HTTP. */
export function newTransport(url, opts) {
  return /^wss?:/i.test(url) ? new WsTransport(url, opts) : new HttpTransport(url, opts);
}

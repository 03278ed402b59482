// lowprio.js: low-priority (LEDBAT) transfers over WebRTC data channels, in the browser. The
// protocol is internal/lowprio compiled to WebAssembly (/wasm/lowprio.wasm), the same code the
// server and strata's Go client run, so the two ends always agree. docs/LOWPRIO.md has the details.
//
//   import * as lowprio from '/lib/lowprio.js';
//   await lowprio.load();                                  // once; get/put/accept also call it
//   const t = await lowprio.get(pc, 'gen:10000000');       // the peer sends; bytes are checked
//   t.on('progress', (p) => console.log(p.bytes, p.rateBps, p.queueDelayMs));
//   const result = await t.finished;                       // {bytes, elapsedMs, verified | blob}
//   await lowprio.put(pc, file.name, file, { variant: 'ledbat++' });   // this end sends
//   lowprio.accept(pc, { onPut: (name) => null });         // answer the peer's channels
//
// Each transfer is its own data channel, unordered and partially reliable (CHANNEL_OPTIONS), labelled
// "lowprio:get:<name>" (the opener receives) or "lowprio:put:<name>" (the opener sends). The name
// "gen:<n>" is a generated stream of n bytes that the receiver checks byte by byte.
//
// Options (get, put, accept): variant "ledbat" (RFC 6817, 100 ms target) or "ledbat++" (60 ms),
// targetMs, progressMs (250), and the protocol's maxMessage, sendBuffer, recvBuffer,
// initialWindow, idleTimeoutMs (defaults as the server's). The variant and target are the sending
// end's choice.

import { Transfer, sendQuietly } from './lptransfer.js';
import { generated, generatedAt } from './lpgen.js';

export { Transfer } from './lptransfer.js';
export { generated, generatedAt } from './lpgen.js';

export const PROTOCOL = 'strata-lp/1';
/**
 * SCTP's retransmission limit on a transfer's channel (internal/lowprio/dc.MaxRetransmits). Not 0:
 * Pion's SCTP answers every SACK of a maxRetransmits-0 stream with a FORWARD-TSN, a ping-pong that
 * took a third to a half of a 2 Mbit/s link (pion/sctp#505); with 2 a message is abandoned only
 * when SCTP would retransmit it, and the protocol's own retransmission does the rest.
 */
export const MAX_RETRANSMITS = 2;
/** The options of every transfer's channel: unordered, so SCTP never holds a message back. */
export const CHANNEL_OPTIONS = Object.freeze({ ordered: false, maxRetransmits: MAX_RETRANSMITS, protocol: PROTOCOL });
const PREFIX = 'lowprio:';
const MAX_NAME = 200; // bytes of UTF-8
const MAX_GENERATED = 2 ** 53;

let loading = null;

/**
 * Loads lowprio.wasm and the Go runtime beside it (once per page) and resolves with the module's
 * API (see cmd/lowprio-wasm). base is the URL of the directory that holds both files.
 */
export function load({ base = new URL('../wasm/', import.meta.url) } = {}) {
  loading ??= instantiate(base).catch((err) => {
    loading = null; // a later call may try again
    throw err;
  });
  return loading;
}

async function instantiate(base) {
  if (!globalThis.Go) await import(new URL('wasm_exec.js', base).href);
  const go = new globalThis.Go();
  const res = await fetch(new URL('lowprio.wasm', base));
  if (!res.ok) throw new Error(`lowprio: ${res.url}: ${res.status} ${(await res.text()).trim()}`);
  const { instance } = await WebAssembly.instantiateStreaming(res, go.importObject);
  go.run(instance); // runs main until it waits for calls; it has set globalThis.strataLowprio by then
  if (!globalThis.strataLowprio) throw new Error('lowprio: lowprio.wasm did not start');
  return globalThis.strataLowprio;
}

/** The label of a transfer's channel: verb "get" or "put". */
export function label(verb, name) {
  if (verb !== 'get' && verb !== 'put') throw new Error(`lowprio: verb ${verb}: want get or put`);
  const bad = checkName(name);
  if (bad) throw new Error(bad);
  return `${PREFIX}${verb}:${name}`;
}

/** Splits a lowprio label into {verb, name}; null for another channel's label. Throws on a bad name. */
export function parseLabel(lbl) {
  if (!lbl.startsWith(PREFIX)) return null;
  const rest = lbl.slice(PREFIX.length);
  const colon = rest.indexOf(':');
  const verb = rest.slice(0, colon);
  if (colon < 0 || (verb !== 'get' && verb !== 'put')) throw new Error(`lowprio: label ${JSON.stringify(lbl)}: want lowprio:get:<name> or lowprio:put:<name>`);
  const name = rest.slice(colon + 1);
  const bad = checkName(name);
  if (bad) throw new Error(bad);
  return { verb, name };
}

/** Why name cannot be a transfer's name, or "" when it can. */
export function checkName(name) {
  if (typeof name !== 'string' || name === '') return 'lowprio: empty name';
  if (new TextEncoder().encode(name).length > MAX_NAME) return `lowprio: name longer than ${MAX_NAME} bytes`;
  if (name.includes('\0')) return 'lowprio: NUL in name';
  if (name.startsWith('/')) return 'lowprio: name starts with /';
  if (name.split('/').includes('..')) return 'lowprio: ".." in name';
  return '';
}

/** The length of the generated stream a name stands for ("gen:<n>"), or -1. */
export function generatedLength(name) {
  const m = /^gen:(\d{1,16})$/.exec(name);
  if (!m || Number(m[1]) > MAX_GENERATED) return -1;
  return Number(m[1]);
}

/**
 * Opens a channel on pc and receives the peer's stream name.
 * @param {RTCPeerConnection} pc
 * @param {string} name
 * @param {object} [opts] sink: {write(u8), close()} or a function(u8) called per chunk (the
 *   chunk is the caller's); without one, a gen:<n> stream is checked and anything else collected
 *   into result.blob
 * @returns {Promise<Transfer>}
 */
export async function get(pc, name, opts = {}) {
  const api = await load();
  const ch = pc.createDataChannel(label('get', name), CHANNEL_OPTIONS);
  const sink = makeSink(name, opts.sink);
  return new Transfer(api, ch, { ...opts, verb: 'get', name, role: 'receive', sink, total: sinkTotal(name) });
}

/**
 * Opens a channel on pc and sends source to the peer as name.
 * @param {RTCPeerConnection} pc
 * @param {string} name
 * @param {Blob|ArrayBuffer|ArrayBufferView|ReadableStream|{read(max): Uint8Array|null|Promise}|null} source
 *   null (or undefined) sends the generated stream of a gen:<n> name
 * @returns {Promise<Transfer>}
 */
export async function put(pc, name, source, opts = {}) {
  const api = await load();
  const src = makeSource(name, source);
  const ch = pc.createDataChannel(label('put', name), CHANNEL_OPTIONS);
  return new Transfer(api, ch, { ...opts, verb: 'put', name, role: 'send', source: src.source, total: src.total });
}

/**
 * Answers the lowprio channels the peer opens on pc (browser to browser): for "put" this end
 * receives, for "get" it sends. onPut(name, channel) returns a sink (as get's), or undefined for
 * the default (gen:<n> checked, anything else collected into a Blob), or throws to refuse;
 * onGet(name, channel) returns a source (as put's), or undefined to serve only gen:<n>, or
 * throws to refuse. onTransfer(transfer) sees every accepted transfer. Other channels are left
 * alone. Returns a function that stops accepting.
 */
export function accept(pc, { onPut, onGet, onTransfer, ...opts } = {}) {
  const listener = (ev) => {
    const ch = ev.channel;
    if (!ch.label.startsWith(PREFIX)) return;
    load().then(
      (api) => acceptChannel(api, ch, { onPut, onGet, onTransfer, opts }),
      (err) => {
        console.error('lowprio:', err);
        ch.close();
      },
    );
  };
  pc.addEventListener('datachannel', listener);
  return () => pc.removeEventListener('datachannel', listener);
}

function acceptChannel(api, ch, { onPut, onGet, onTransfer, opts }) {
  let t;
  try {
    // Unordered and partially reliable; a limit below ours (an older peer's 0) still works.
    if (ch.ordered || ch.maxRetransmits == null || ch.maxRetransmits > MAX_RETRANSMITS) {
      throw new Error(`lowprio: the channel must be unordered with maxRetransmits at most ${MAX_RETRANSMITS}`);
    }
    const { verb, name } = parseLabel(ch.label);
    if (verb === 'put') {
      const sink = makeSink(name, onPut?.(name, ch));
      t = new Transfer(api, ch, { ...opts, verb, name, role: 'receive', sink, total: sinkTotal(name) });
    } else {
      const src = makeSource(name, onGet?.(name, ch));
      t = new Transfer(api, ch, { ...opts, verb, name, role: 'send', source: src.source, total: src.total });
    }
  } catch (err) {
    refuse(api, ch, String(err.message ?? err));
    return;
  }
  onTransfer?.(t);
}

/** Ends a channel this end will not serve with a RESET carrying reason, then closes it. */
function refuse(api, ch, reason) {
  const send = () => {
    const ep = api.newReceiver({});
    ep.abort(reason);
    ep.poll(performance.now(), (msg) => sendQuietly(ch, msg));
    ep.free();
    ch.close();
  };
  if (ch.readyState === 'open') send();
  else ch.addEventListener('open', send, { once: true });
}

function sinkTotal(name) {
  const n = generatedLength(name);
  return n >= 0 ? n : null;
}

/** A sink as Transfer wants it: {write(u8), close() → extra result fields}. */
function makeSink(name, sink) {
  if (typeof sink === 'function') return { write: sink, close: () => ({}) };
  if (sink) return { write: (u8) => sink.write(u8), close: () => sink.close?.() ?? {} };
  const n = generatedLength(name);
  return n >= 0 ? verifier(n) : collector();
}

/** Checks every received byte against the generated stream gen:<n>. */
function verifier(n) {
  let at = 0;
  let want = new Uint8Array(0);
  return {
    write(u8) {
      if (at + u8.length > n) throw new Error(`more than the ${n} bytes of gen:${n}`);
      if (want.length < u8.length) want = new Uint8Array(u8.length);
      generatedAt(at, want.subarray(0, u8.length));
      for (let i = 0; i < u8.length; i++) {
        if (u8[i] !== want[i]) throw new Error(`byte ${at + i} differs from gen:${n}`);
      }
      at += u8.length;
    },
    close() {
      if (at !== n) throw new Error(`gen:${n} ended after ${at} bytes`);
      return { verified: at };
    },
  };
}

function collector() {
  const parts = [];
  return { write: (u8) => parts.push(u8), close: () => ({ blob: new Blob(parts) }) };
}

/** A source as Transfer wants it: {read(max) → Uint8Array | null at the end | a Promise of one}. */
function makeSource(name, source) {
  if (source == null) {
    const n = generatedLength(name);
    if (n < 0) throw new Error(`lowprio: nothing to send as ${name}`);
    return { source: generated(n), total: n };
  }
  if (source instanceof Blob) {
    let off = 0;
    const read = async (max) => {
      if (off >= source.size) return null;
      const part = source.slice(off, off + max);
      off += part.size;
      return new Uint8Array(await part.arrayBuffer());
    };
    return { source: { read }, total: source.size };
  }
  if (source instanceof ArrayBuffer || ArrayBuffer.isView(source)) {
    const all = source instanceof ArrayBuffer ? new Uint8Array(source) : new Uint8Array(source.buffer, source.byteOffset, source.byteLength);
    let off = 0;
    const read = (max) => {
      if (off >= all.length) return null;
      const part = all.subarray(off, off + max);
      off += part.length;
      return part;
    };
    return { source: { read }, total: all.length };
  }
  if (typeof ReadableStream !== 'undefined' && source instanceof ReadableStream) {
    const reader = source.getReader();
    const read = async () => {
      const { value, done } = await reader.read();
      return done ? null : new Uint8Array(value);
    };
    return { source: { read }, total: null };
  }
  if (typeof source.read === 'function') return { source, total: null };
  throw new Error('lowprio: source must be a Blob, a buffer, a ReadableStream or {read(max)}');
}

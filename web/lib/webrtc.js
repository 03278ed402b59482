// A small WebRTC helper for the demos: one PeerConnection that sends local media to a plugin and
// plays what comes back. It follows Janus's half-trickle model: the server puts its candidates in
// its answer; the browser trickles its own with Handle.trickle once the offer is in.

/**
 * A call in progress. pc is the RTCPeerConnection; localStream holds the captured tracks;
 * remoteStream collects the tracks the server sends; reply is the plugin's answer to the offer.
 */
export class Call {
  constructor(handle, pc, localStream) {
    this.handle = handle;
    this.pc = pc;
    this.localStream = localStream;
    this.remoteStream = new MediaStream();
    this.reply = null;
    this.closed = false;
  }

  /** Enables or disables the local tracks of one kind ("audio" or "video") without renegotiating. */
  setLocalEnabled(kind, enabled) {
    for (const t of this.localStream.getTracks()) if (t.kind === kind) t.enabled = enabled;
  }

  /** Stops local capture and closes the PeerConnection. Does not talk to the server. */
  close() {
    if (this.closed) return;
    this.closed = true;
    for (const t of this.localStream.getTracks()) t.stop();
    this.pc.close();
  }

  /** Asks the server to hang up, then closes locally. */
  async hangup() {
    try {
      if (!this.handle.detached && !this.handle.session.closed) await this.handle.hangup();
    } finally {
      this.close();
    }
  }
}

/**
 * Starts a call on a handle: captures media, offers it with body, applies the answer.
 * @param {import('./strata.js').Handle} handle
 * @param {object} [options]
 * @param {object} [options.body]         the plugin request sent with the offer, e.g. {audio:true, video:true}
 * @param {boolean|object} [options.audio] getUserMedia audio constraint (default true)
 * @param {boolean|object} [options.video] getUserMedia video constraint (default 640x480)
 * @param {MediaStream} [options.stream]   send this stream instead of capturing one
 * @param {RTCIceServer[]} [options.iceServers]
 * @param {(track: MediaStreamTrack, call: Call) => void} [options.onTrack]
 * @param {(pc: RTCPeerConnection) => void} [options.prepare] called before the offer, e.g. to create a
 *   data channel so that the offer has a data section (lib/lowprio.js transfers need one)
 * @returns {Promise<Call>}
 */
export async function startCall(handle, options = {}) {
  const {
    body = {},
    audio = true,
    video = { width: { ideal: 640 }, height: { ideal: 480 } },
    iceServers = [],
    onTrack,
    prepare,
  } = options;
  const stream = options.stream ?? (await navigator.mediaDevices.getUserMedia({ audio, video }));
  const pc = new RTCPeerConnection({ iceServers, bundlePolicy: 'max-bundle' });
  const call = new Call(handle, pc, stream);
  try {
    prepare?.(pc);
    await negotiate(call, body, onTrack);
  } catch (err) {
    call.close();
    throw err;
  }
  return call;
}

async function negotiate(call, body, onTrack) {
  const { pc, handle, localStream } = call;
  for (const track of localStream.getTracks()) {
    pc.addTransceiver(track, { direction: 'sendrecv', streams: [localStream] });
  }
  pc.ontrack = (ev) => {
    call.remoteStream.addTrack(ev.track);
    onTrack?.(ev.track, call);
  };
  const trickle = trickleQueue(handle);
  pc.onicecandidate = (ev) => trickle.push(ev.candidate);
  const offSrvCandidate = handle.on('trickle', (c) => addServerCandidate(pc, c));
  pc.addEventListener('connectionstatechange', () => {
    if (pc.connectionState === 'closed') offSrvCandidate();
  });

  await pc.setLocalDescription(await pc.createOffer());
  call.reply = await handle.message(body, pc.localDescription);
  if (!call.reply.jsep) throw new Error(`${handle.plugin} answered the offer without a jsep`);
  await pc.setRemoteDescription(call.reply.jsep);
  // Only now has the server seen the offer, so trickled candidates cannot overtake it (over HTTP
  // each request is its own POST and their order is not guaranteed).
  trickle.flush();
}

/**
 * Holds candidates until flush(), then sends the backlog and every later one straight away. Also
 * used by lib/streaming.js, whose PeerConnection answers instead of offering.
 */
export function trickleQueue(handle) {
  let backlog = [];
  let flowing = false;
  const send = (candidates) => {
    handle.trickle(candidates).catch((err) => console.warn('strata: trickle failed', err));
  };
  return {
    push(candidate) {
      if (!flowing) {
        backlog.push(candidate);
        return;
      }
      send(candidate);
    },
    flush() {
      flowing = true;
      const done = backlog.includes(null);
      const real = backlog.filter((c) => c !== null);
      backlog = [];
      if (real.length) send(real);
      if (done) send(null);
    },
  };
}

/** Adds a candidate the server trickled (full-trickle servers); null or completed ends them. */
export function addServerCandidate(pc, c) {
  const candidate = !c || c.completed ? null : c;
  pc.addIceCandidate(candidate).catch((err) => console.warn('strata: cannot add server candidate', err));
}

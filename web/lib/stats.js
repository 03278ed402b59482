// Samples RTCPeerConnection.getStats() on a timer and turns two consecutive reports into the numbers
// a person wants to see: bitrate in and out, round-trip time, packet loss, and the received video.

/**
 * One sample, computed from two reports.
 * @typedef {object} StatsSample
 * @property {number} time          ms since the epoch, from the newer report
 * @property {number} bitrateOutKbps all outbound RTP (audio + video), kbit/s
 * @property {number} bitrateInKbps  all inbound RTP, kbit/s
 * @property {number|null} rttMs     round-trip time of the selected candidate pair (or RTCP's), ms
 * @property {number} lossPercent    inbound packets lost in the interval, percent of expected
 * @property {number} framesDecoded  inbound video, cumulative
 * @property {number} frameWidth     inbound video, 0 until a frame is decoded
 * @property {number} frameHeight
 * @property {number} framesPerSecond inbound video
 * @property {InboundVideo[]} videos each inbound video stream, in report order
 */

/**
 * One inbound video stream (an inbound-rtp entry of kind video).
 * @typedef {object} InboundVideo
 * @property {string} mid           the transceiver's mid ("" if the browser does not say)
 * @property {number} bitrateKbps   received in the interval, kbit/s
 * @property {number} framesDecoded cumulative
 * @property {number} frameWidth    0 until a frame is decoded
 * @property {number} frameHeight
 * @property {number} framesPerSecond
 */

/**
 * Computes a sample from the previous and the current report (both Maps of stats id → stats
 * object, as RTCStatsReport is). prev may be null for the first report: rates are then 0.
 * @returns {StatsSample}
 */
export function summarizeStats(prev, cur) {
  const now = latestTimestamp(cur);
  const dtSec = prev ? (now - latestTimestamp(prev)) / 1000 : 0;
  const sum = (report, type, field) => {
    let total = 0;
    for (const s of report.values()) if (s.type === type && typeof s[field] === 'number') total += s[field];
    return total;
  };
  const rate = (type, field) => {
    if (!prev || dtSec <= 0) return 0;
    return Math.max(0, (sum(cur, type, field) - sum(prev, type, field)) * 8) / dtSec / 1000;
  };
  const lostDelta = prev ? sum(cur, 'inbound-rtp', 'packetsLost') - sum(prev, 'inbound-rtp', 'packetsLost') : 0;
  const recvDelta = prev
    ? sum(cur, 'inbound-rtp', 'packetsReceived') - sum(prev, 'inbound-rtp', 'packetsReceived')
    : 0;
  const expected = Math.max(0, lostDelta) + Math.max(0, recvDelta);
  const video = inboundVideo(cur);
  return {
    time: now,
    bitrateOutKbps: rate('outbound-rtp', 'bytesSent'),
    bitrateInKbps: rate('inbound-rtp', 'bytesReceived'),
    rttMs: roundTripMs(cur),
    lossPercent: expected > 0 ? (100 * Math.max(0, lostDelta)) / expected : 0,
    framesDecoded: video?.framesDecoded ?? 0,
    frameWidth: video?.frameWidth ?? 0,
    frameHeight: video?.frameHeight ?? 0,
    framesPerSecond: video?.framesPerSecond ?? 0,
    videos: inboundVideos(prev, cur, dtSec),
  };
}

function inboundVideos(prev, cur, dtSec) {
  const videos = [];
  for (const [id, s] of cur) {
    if (s.type !== 'inbound-rtp' || s.kind !== 'video') continue;
    const before = prev?.get(id);
    const bits = before && dtSec > 0 ? Math.max(0, (s.bytesReceived ?? 0) - (before.bytesReceived ?? 0)) * 8 : 0;
    videos.push({
      mid: s.mid ?? '',
      bitrateKbps: dtSec > 0 ? bits / dtSec / 1000 : 0,
      framesDecoded: s.framesDecoded ?? 0,
      frameWidth: s.frameWidth ?? 0,
      frameHeight: s.frameHeight ?? 0,
      framesPerSecond: s.framesPerSecond ?? 0,
    });
  }
  return videos;
}

function latestTimestamp(report) {
  let t = 0;
  for (const s of report.values()) if (s.timestamp > t) t = s.timestamp;
  return t;
}

function inboundVideo(report) {
  let best = null;
  for (const s of report.values()) {
    if (s.type !== 'inbound-rtp' || s.kind !== 'video') continue;
    if (!best || (s.framesDecoded ?? 0) > (best.framesDecoded ?? 0)) best = s;
  }
  return best;
}

/** RTT of the selected ICE candidate pair, falling back to RTCP receiver reports. */
function roundTripMs(report) {
  for (const s of report.values()) {
    if (s.type !== 'transport' || !s.selectedCandidatePairId) continue;
    const pair = report.get(s.selectedCandidatePairId);
    if (typeof pair?.currentRoundTripTime === 'number') return pair.currentRoundTripTime * 1000;
  }
  for (const s of report.values()) {
    if (s.type === 'candidate-pair' && s.nominated && typeof s.currentRoundTripTime === 'number') {
      return s.currentRoundTripTime * 1000;
    }
  }
  for (const s of report.values()) {
    if (s.type === 'remote-inbound-rtp' && typeof s.roundTripTime === 'number') return s.roundTripTime * 1000;
  }
  return null;
}

/** Calls getStats every intervalMs and reports a StatsSample to onSample; keeps a bounded history. */
export class StatsSampler {
  #pc;
  #timer = null;
  #prev = null;

  /**
   * @param {RTCPeerConnection} pc
   * @param {{intervalMs?: number, historySize?: number, onSample?: (s: StatsSample, all: StatsSample[]) => void}} [opts]
   */
  constructor(pc, { intervalMs = 1000, historySize = 120, onSample } = {}) {
    this.#pc = pc;
    this.intervalMs = intervalMs;
    this.historySize = historySize;
    this.onSample = onSample;
    /** @type {StatsSample[]} */
    this.samples = [];
  }

  /** @returns {StatsSample|undefined} */
  get last() {
    return this.samples[this.samples.length - 1];
  }

  start() {
    if (this.#timer) return;
    this.#timer = setInterval(() => this.sample(), this.intervalMs);
    this.sample();
  }

  stop() {
    clearInterval(this.#timer);
    this.#timer = null;
  }

  /** Takes one sample now. */
  async sample() {
    if (this.#pc.connectionState === 'closed') return;
    const report = new Map(await this.#pc.getStats());
    const s = summarizeStats(this.#prev, report);
    this.#prev = report;
    this.samples.push(s);
    if (this.samples.length > this.historySize) this.samples.shift();
    this.onSample?.(s, this.samples);
  }
}

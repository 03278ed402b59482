// The sender statistics both benchmark pages (uplink.html, peer.html) sample: window.uplink is what
// the benchmark reads — state, the time the PeerConnection came up, getStats() every 250 ms. A page
// sets uplink.pc to a function returning its sending RTCPeerConnection and calls up() once media flows.
const uplink = (window.uplink = { state: 'loading', upAt: null, error: null, samples: [], events: [], pc: () => null });

function note(event) {
  uplink.events.push(Math.round(performance.now()) + ' ' + event);
  console.log('uplink:', event);
}

function fail(what, err) {
  uplink.state = 'error';
  uplink.error = what + ': ' + (err && err.message ? err.message : JSON.stringify(err));
  console.error('uplink:', uplink.error);
}

function up() {
  if (uplink.upAt !== null) return;
  uplink.upAt = performance.now();
  uplink.state = 'up';
  setInterval(sample, 250);
}

// sample records the cumulative sender statistics; the benchmark takes deltas over its window.
let sampling = false;
async function sample() {
  const pc = uplink.pc();
  if (!pc || sampling) return;
  sampling = true;
  try {
    const report = await pc.getStats();
    const s = { t: performance.now() };
    let pairId = null;
    report.forEach((x) => {
      if (x.type === 'outbound-rtp' && x.kind === 'video') {
        Object.assign(s, {
          vBytes: x.bytesSent, vHdr: x.headerBytesSent, vRtx: x.retransmittedBytesSent,
          vPkts: x.packetsSent, vRtxPkts: x.retransmittedPacketsSent, nack: x.nackCount, pli: x.pliCount,
          target: x.targetBitrate, ql: x.qualityLimitationReason, qld: x.qualityLimitationDurations,
          fps: x.framesPerSecond, w: x.frameWidth, h: x.frameHeight,
        });
      } else if (x.type === 'outbound-rtp' && x.kind === 'audio') {
        Object.assign(s, { aBytes: x.bytesSent, aHdr: x.headerBytesSent });
      } else if (x.type === 'remote-inbound-rtp' && x.kind === 'video') {
        Object.assign(s, {
          rRtt: x.roundTripTime, rRttN: x.roundTripTimeMeasurements, rRttSum: x.totalRoundTripTime,
          rLost: x.packetsLost, rFrac: x.fractionLost,
        });
      } else if (x.type === 'transport' && x.selectedCandidatePairId) {
        pairId = x.selectedCandidatePairId;
      }
    });
    const pair = pairId && report.get(pairId);
    if (pair) {
      Object.assign(s, {
        pRtt: pair.currentRoundTripTime, pRttN: pair.responsesReceived, pRttSum: pair.totalRoundTripTime,
        avail: pair.availableOutgoingBitrate, pBytes: pair.bytesSent,
      });
    }
    uplink.samples.push(s);
  } catch (err) {
    note('getStats: ' + err);
  } finally {
    sampling = false;
  }
}


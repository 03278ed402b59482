// Package sfu is strata's one media core, codec-agnostic thanks to package media. Every plugin
// moves media through it:
//
//   - a Receiver per published track (one layer per simulcast encoding, or one stream carrying SVC
//     layers) parses each packet once into flags, keeps it in a packet cache, measures the bitrate
//     of every spatial/temporal layer, rate-limits keyframe requests to the publisher, and hands
//     the packet to its sinks (Sink: WriteRTP and Resync);
//   - a DownTrack is the sink towards one subscriber's PeerConnection (a webrtc.TrackLocal): it
//     selects layers (switching only at keyframes and switch points, forwarding the old layer until
//     the new one can be decoded), maps SSRC, sequence numbers, timestamps and picture ids, answers
//     NACKs from the cache (over RTX when negotiated), turns the subscriber's PLI/FIR into a
//     rate-limited request to the publisher and sends padding when the allocator probes;
//   - a Forwarder is the sink that relays a layer as RTP or SRTP to a host and port (rtp_forward);
//     recorders (package record) and mixer inputs (package audio) are sinks of the plugins that
//     need them;
//   - an Allocator per subscriber runs on its own goroutine, fed by an event queue (tracks added or
//     removed, caps from the API), every feedback message of the subscriber's Estimator and a tick;
//     it asks a policy (package policy) for target layers, applies them, and sends the Prober's
//     probe clusters as padding.
//
// Time on the media path is a monotonic duration passed as an argument (Now gives the process's);
// nothing on the per-packet path allocates.
package sfu

import (
	"time"

	"github.com/strata-rtc/strata/internal/sfu/policy"
)

// Layer is a spatial layer (simulcast substream or SVC spatial layer) and the highest temporal
// layer forwarded with it.
type Layer = policy.Layer

var epoch = time.Now()

// Now is the monotonic time the media path uses (time since the process started).
func Now() time.Duration { return time.Since(epoch) }

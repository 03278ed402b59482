// Package sfu is strata's forwarding core, codec-agnostic thanks to package media:
//
//   - a Receiver per published track (one layer per simulcast encoding, or one stream carrying SVC
//     layers) parses each packet once into flags, keeps it in a packet cache, measures the bitrate
//     of every spatial/temporal layer, rate-limits keyframe requests to the publisher, and fans the
//     packet out to its down-tracks;
//   - a DownTrack per subscriber and track (a webrtc.TrackLocal) selects layers (switching only at
//     keyframes and switch points, forwarding the old layer until the new one can be decoded),
//     rewrites SSRC, sequence numbers, timestamps and picture ids in place, answers NACKs from the
//     cache (over RTX when negotiated), turns the subscriber's PLI/FIR into a rate-limited request
//     to the publisher and sends padding when the allocator probes;
//   - an Allocator per subscriber runs on its own goroutine, fed by an event queue (tracks added or
//     removed, caps from the API) and a tick that reads the subscriber's bandwidth estimate; it asks
//     a policy (package policy) for target layers and applies them.
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

// Package source holds the media sources that do not arrive over a PeerConnection: plain RTP on
// UDP ports (a streaming mountpoint fed by ffmpeg, GStreamer or another server's rtp_forward),
// media files played in real time, RTSP servers and cameras, and recordings played back. Each one
// feeds the same sfu.Receiver a published track has, so whatever consumes it — a viewer's
// DownTrack, a recorder, a forwarder — is the same Sink as in every other plugin.
//
// A Source owns its goroutines and sockets; the Receivers of its tracks exist from the start
// (sinks may be added before the first packet) and are closed by Close.
package source

import (
	"github.com/strata-rtc/strata/internal/media"
	"github.com/strata-rtc/strata/internal/sfu"
)

// Kind is what a track carries.
type Kind string

// The kinds of track, named as Janus's streaming plugin names its streams.
const (
	Audio Kind = "audio"
	Video Kind = "video"
	Data  Kind = "data"
)

// Track is one stream of a source.
type Track struct {
	Kind Kind
	// MID is the stream's mid in the mountpoint (Janus's "mid"), empty if the source does not
	// name it.
	MID string
	// Label is a human-readable description (Janus's "label"), may be empty.
	Label string
	// Codec, payload type and fmtp of the packets the Receiver carries (zero for data).
	Codec media.Codec
	PT    uint8
	Fmtp  string
	// Recv carries the track's packets (nil for data tracks).
	Recv *sfu.Receiver
}

// Source is a running media source.
type Source interface {
	// Tracks are the source's streams, fixed once the source is open.
	Tracks() []Track
	// Close stops the source's goroutines, releases its sockets and files, and closes its
	// Receivers. It is safe to call more than once.
	Close() error
}

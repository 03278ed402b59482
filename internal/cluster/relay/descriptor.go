package relay

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/internal/media"
	"github.com/strata-rtc/strata/internal/sfu"
	"github.com/strata-rtc/strata/internal/sfu/policy"
)

// FeedDescriptor is what the origin tells an edge about an exported feed: enough to build, on the
// edge, a Receiver per stream that DownTracks and allocators use as they use the origin's.
type FeedDescriptor struct {
	Feed string `json:"feed"`
	// Generation changes with every Export of the feed id: an edge that described one export
	// cannot subscribe to the next by mistake.
	Generation uint64             `json:"generation"`
	Streams    []StreamDescriptor `json:"streams"`
}

// StreamDescriptor is one track of a feed as it crosses a link.
type StreamDescriptor struct {
	Mid  string `json:"mid"`
	Kind string `json:"kind"` // "audio", "video" or "data" (data.go: no codec, no layers)
	// Codec is the publisher's negotiated format (MIME type, clock rate, channels, fmtp): an edge
	// offers it to its subscribers as the origin would.
	Codec CodecDescriptor `json:"codec"`
	// Simulcast: the layers are separate streams; otherwise one stream (SVC layers inside).
	Simulcast bool `json:"simulcast,omitempty"`
	// Layers is how many receiver layers cross the link (simulcast encodings; 1 otherwise).
	Layers int `json:"layers"`
	// RIDs name the layers as the publisher did (index = layer), when it used RIDs.
	RIDs []string `json:"rids,omitempty"`
	// Extensions are the header extensions the packets carry on the link, URI → the link's id.
	Extensions map[string]int `json:"extensions,omitempty"`
}

// CodecDescriptor is a codec as negotiated with the publisher.
type CodecDescriptor struct {
	MimeType  string `json:"mime"`
	ClockRate uint32 `json:"clock_rate"`
	Channels  uint16 `json:"channels,omitempty"`
	Fmtp      string `json:"fmtp,omitempty"`
}

// Capability is the codec as Pion describes it (what a DownTrackConfig takes).
func (c CodecDescriptor) Capability() webrtc.RTPCodecCapability {
	return webrtc.RTPCodecCapability{MimeType: c.MimeType, ClockRate: c.ClockRate, Channels: c.Channels, SDPFmtpLine: c.Fmtp}
}

// The header extensions that cross a link, always under these ids: the origin rewrites every
// packet's header to them, so an edge's Receiver needs nothing of the publisher's negotiation.
var linkExtensions = sfu.ExtIDs{AudioLevel: 1, DependencyDescriptor: 2, VideoOrientation: 3}

// linkExtensionIDs names linkExtensions by URI (the descriptor's form).
func linkExtensionIDs(origin sfu.ExtIDs) map[string]int {
	m := map[string]int{}
	if origin.AudioLevel != 0 {
		m[sfu.AudioLevelURI] = int(linkExtensions.AudioLevel)
	}
	if origin.DependencyDescriptor != 0 {
		m[sfu.DependencyDescriptorURI] = int(linkExtensions.DependencyDescriptor)
	}
	if origin.VideoOrientation != 0 {
		m[sfu.VideoOrientationURI] = int(linkExtensions.VideoOrientation)
	}
	return m
}

// Limits on what a descriptor may hold: remote input is bounded before anything is built from it.
const (
	maxStreams   = 16
	maxIDLength  = 256
	maxFmtpBytes = 512
)

// Errors a descriptor or a request about one can give.
var (
	ErrNoFeed         = errors.New("relay: no such feed")
	ErrBadDescriptor  = errors.New("relay: bad feed descriptor")
	ErrSSRCCollision  = errors.New("relay: SSRC already in use on the link")
	ErrUnknownCodec   = errors.New("relay: unknown codec")
	ErrGenerationGone = errors.New("relay: the feed was exported again")
)

// DecodeDescriptor parses and checks a descriptor received from another node.
func DecodeDescriptor(b []byte) (FeedDescriptor, error) {
	var d FeedDescriptor
	if err := json.Unmarshal(b, &d); err != nil {
		return FeedDescriptor{}, fmt.Errorf("%w: %v", ErrBadDescriptor, err)
	}
	if err := d.Validate(); err != nil {
		return FeedDescriptor{}, err
	}
	return d, nil
}

// Validate checks everything an edge builds from: codec, kind, layer counts, extension ids; a data
// stream has a mid and nothing else.
func (d FeedDescriptor) Validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: feed %q: %s", ErrBadDescriptor, d.Feed, fmt.Sprintf(format, args...))
	}
	if d.Feed == "" || len(d.Feed) > maxIDLength {
		return bad("feed id empty or longer than %d bytes", maxIDLength)
	}
	if len(d.Streams) == 0 || len(d.Streams) > maxStreams {
		return bad("%d streams (1 to %d)", len(d.Streams), maxStreams)
	}
	mids := map[string]bool{}
	for i, s := range d.Streams {
		if s.Mid == "" || len(s.Mid) > maxIDLength || mids[s.Mid] {
			return bad("stream %d: mid %q empty, too long or repeated", i, s.Mid)
		}
		mids[s.Mid] = true
		if s.Kind == dataKind {
			if err := s.validateData(); err != nil {
				return bad("%v", err)
			}
			continue
		}
		c := codecOf(s.Codec.MimeType)
		if c == media.CodecUnknown {
			return fmt.Errorf("%w: feed %q stream %q: %q", ErrUnknownCodec, d.Feed, s.Mid, s.Codec.MimeType)
		}
		if want := kindOf(c); s.Kind != want {
			return bad("stream %q: kind %q for %s", s.Mid, s.Kind, c)
		}
		if s.Codec.ClockRate != c.ClockRate() || len(s.Codec.Fmtp) > maxFmtpBytes {
			return bad("stream %q: clock rate %d or fmtp of %d bytes", s.Mid, s.Codec.ClockRate, len(s.Codec.Fmtp))
		}
		if s.Layers < 1 || s.Layers > policy.MaxSpatial || !s.Simulcast && s.Layers != 1 || s.Simulcast && !c.IsVideo() {
			return bad("stream %q: %d layers (simulcast %v)", s.Mid, s.Layers, s.Simulcast)
		}
		if len(s.RIDs) != 0 && len(s.RIDs) != s.Layers {
			return bad("stream %q: %d RIDs for %d layers", s.Mid, len(s.RIDs), s.Layers)
		}
		for uri, id := range s.Extensions {
			if linkExtensionIDs(sfu.ExtIDs{AudioLevel: 1, DependencyDescriptor: 1, VideoOrientation: 1})[uri] != id {
				return bad("stream %q: extension %q with id %d (not the link's)", s.Mid, uri, id)
			}
		}
	}
	return nil
}

// extIDs are the link's ids of the extensions a stream carries.
func (s StreamDescriptor) extIDs() sfu.ExtIDs { return sfu.ExtIDsFrom(s.Extensions) }

// codecOf is the codec a MIME type names (CodecUnknown when it is not one strata forwards).
func codecOf(mime string) media.Codec {
	typ, _, ok := strings.Cut(mime, "/")
	if !ok {
		return media.CodecUnknown
	}
	c := media.CodecByName(mime)
	if c == media.CodecUnknown || !strings.EqualFold(c.MimeType(), mime) || kindOf(c) != strings.ToLower(typ) {
		return media.CodecUnknown
	}
	return c
}

func kindOf(c media.Codec) string {
	if c.IsVideo() {
		return "video"
	}
	return "audio"
}

package videocall

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/internal/media"
	"github.com/strata-rtc/strata/internal/peer"
	"github.com/strata-rtc/strata/internal/plugin"
	"github.com/strata-rtc/strata/internal/sfu"
	"github.com/strata-rtc/strata/internal/sfu/policy"
)

// noLimit is the REMB Janus sends when a bitrate cap is lifted (10 Mbit/s).
const noLimit = 10_000_000

// calleeRIDs are the rids strata offers a callee to send simulcast on, lowest first: a browser
// scales the encodings it makes from the offer down by 4, 2 and 1 in this order.
var calleeRIDs = []string{"l", "m", "h"}

// call is the media of one call: two legs, the caller's (0) and the callee's (1). Each m-line of
// the caller's offer is one track on each leg: what a user sends feeds the leg's Receiver, and the
// other leg's DownTrack of it sends it to the other user on the same m-line.
type call struct {
	p      *Plugin
	legs   [2]*leg
	answer *plugin.JSEP // strata's answer to the caller, sent with "accepted"
	// simulcastMids are the callee's m-lines strata offers to receive simulcast on: with
	// callee_simulcast, those the caller sends simulcast on, so that the call is simulcast both ways.
	simulcastMids []string
	// accepted is guarded by the plugin's mu.
	accepted bool
	done     chan struct{}
	once     sync.Once
}

// leg is one user's side of a call: its PeerConnection, the tracks by mid, and the allocator
// that fits what this user receives into this user's own bandwidth estimate.
type leg struct {
	c     *call
	s     *session
	peer  *peer.Peer
	alloc *sfu.Allocator

	mu       sync.Mutex
	tracks   map[string]*track
	channels map[string]*channel // data channels by label (data.go)
	up       bool
	// dataUnsent counts messages to this user that had no channel to go on (data.go).
	dataUnsent atomic.Uint64
}

// track is one m-line of a leg.
type track struct {
	mid     string
	video   bool
	codec   media.Codec
	cap     webrtc.RTPCodecCapability // the negotiated codec, what the down-tracks send
	recv    *sfu.Receiver             // what this leg's user sends
	down    *sfu.DownTrack            // what this leg's user receives: the other leg's recv
	sender  *webrtc.RTPSender
	layerOf map[string]int // simulcast rid → layer
	// simulcast: the user sends this m-line as simulcast (the caller's offer, the callee's answer
	// says so); its layer changes are reported to the other user.
	simulcast atomic.Bool
	// reported is the layer this user was last told of; guarded by the leg's mu.
	reported policy.Layer
}

// newCall creates both legs' PeerConnections and allocators.
func newCall(caller, callee *session) (*call, *plugin.RequestError) {
	c := &call{p: caller.p, done: make(chan struct{})}
	for i, s := range []*session{caller, callee} {
		// The down-tracks answer NACKs from the receivers' caches.
		p, err := s.h.Peer(peer.WithoutNACKResponder())
		if err != nil {
			c.close()
			return nil, plugin.Errorf(ErrUnknown, "No PeerConnection: %v", err)
		}
		l := &leg{c: c, s: s, peer: p, tracks: map[string]*track{}, channels: map[string]*channel{}}
		var est sfu.Estimator
		var prober sfu.Prober
		if e := p.Estimator(); e != nil {
			est, prober = e, e
		}
		l.alloc, err = sfu.NewAllocator(c.p.alloc, est, prober, sfu.WithLogger(s.log))
		if err != nil {
			c.close()
			return nil, plugin.Errorf(ErrUnknown, "Allocator: %v", err)
		}
		l.alloc.Start()
		p.OnTrack(l.onTrack)
		l.watchData()
		c.legs[i] = l
	}
	return c, nil
}

// leg is s's leg.
func (c *call) leg(s *session) *leg {
	if c.legs[0].s == s {
		return c.legs[0]
	}
	return c.legs[1]
}

// other is the leg of the other user.
func (c *call) other(l *leg) *leg {
	if c.legs[0] == l {
		return c.legs[1]
	}
	return c.legs[0]
}

// negotiate answers the caller's offer and returns strata's offer to the callee.
func (c *call) negotiate(ctx context.Context, jsep *plugin.JSEP) (*plugin.JSEP, *plugin.RequestError) {
	rids := media.OfferRIDs(jsep.SDP)
	prepare := peer.BeforeLocal(func(pc *webrtc.PeerConnection) error {
		for _, t := range pc.GetTransceivers() {
			kind := t.Kind()
			if (kind != webrtc.RTPCodecTypeAudio && kind != webrtc.RTPCodecTypeVideo) || t.Sender() != nil || t.Mid() == "" {
				continue
			}
			if err := c.pair(pc, t, rids[t.Mid()], jsep.RIDOrder); err != nil {
				return err
			}
		}
		return nil
	})
	answer, err := c.legs[0].peer.Answer(ctx, webrtc.SessionDescription{Type: webrtc.SDPTypeOffer, SDP: jsep.SDP}, prepare)
	if err != nil {
		return nil, plugin.Errorf(ErrInvalidSDP, "Error parsing offer: %v", err)
	}
	c.answer = &plugin.JSEP{Type: "answer", SDP: answer.SDP}
	if media.OffersDataChannels(jsep.SDP) {
		if err := c.legs[1].openData(); err != nil {
			return nil, plugin.Errorf(ErrUnknown, "Data channel: %v", err)
		}
	}
	offer, err := c.legs[1].peer.Offer(ctx)
	if err != nil {
		return nil, plugin.Errorf(ErrUnknown, "Offering the call: %v", err)
	}
	sdp := offer.SDP
	if len(c.simulcastMids) > 0 {
		if sdp, err = media.OfferRecvSimulcast(sdp, c.simulcastMids, calleeRIDs); err != nil {
			return nil, plugin.Errorf(ErrUnknown, "Offering the call: %v", err)
		}
	}
	return &plugin.JSEP{Type: "offer", SDP: sdp}, nil
}

// pair makes the tracks of one m-line of the caller's offer: the caller's codec (its first) on
// both legs, a Receiver for each user, and a DownTrack of it towards the other user.
func (c *call) pair(pc *webrtc.PeerConnection, t *webrtc.RTPTransceiver, rids []string, ridOrder string) error {
	a, b, mid := c.legs[0], c.legs[1], t.Mid()
	offered := t.Receiver().GetParameters()
	chosen, ok := media.PickCodec(offered.Codecs, nil, "")
	if !ok {
		return nil
	}
	if err := t.SetCodecPreferences(media.WithRTX(chosen, offered.Codecs)); err != nil {
		return fmt.Errorf("codec preferences for mid %s: %w", mid, err)
	}
	ta := a.newTrack(mid, chosen, offered.HeaderExtensions, rids, ridOrder)
	ta.simulcast.Store(len(rids) > 1)
	tb := b.newTrack(mid, chosen, nil, nil, "")
	tb.down = b.newDown(ta)
	tr, err := b.peer.PC.AddTransceiverFromTrack(tb.down, webrtc.RTPTransceiverInit{Direction: webrtc.RTPTransceiverDirectionSendrecv})
	if err != nil {
		return fmt.Errorf("callee track for mid %s: %w", mid, err)
	}
	if err := tr.SetMid(mid); err != nil {
		return fmt.Errorf("callee mid %s: %w", mid, err)
	}
	engine := tr.Sender().GetParameters().Codecs
	if same, ok := media.MatchCodec(chosen.RTPCodecCapability, engine); ok {
		if err := tr.SetCodecPreferences(media.WithRTX(same, engine)); err != nil {
			return fmt.Errorf("callee codec for mid %s: %w", mid, err)
		}
	}
	// strata offers the callee its own header extension ids, which the callee's answer keeps. With
	// callee_simulcast a callee answers a simulcast caller with simulcast too if it can
	// (calleeRIDs); one that sends a single stream is that Receiver's layer 0.
	simulcast := tb.video && len(rids) > 1 && c.p.cfg.CalleeSimulcast
	if simulcast {
		c.simulcastMids = append(c.simulcastMids, mid)
		tb.layerOf = media.SimulcastLayers(calleeRIDs, "lmh")
	}
	tb.recv = b.newReceiver(mid, chosen, tr.Receiver().GetParameters().HeaderExtensions, simulcast)
	tb.sender = tr.Sender()
	ta.down = a.newDown(tb)
	if ta.sender, err = pc.AddTrack(ta.down); err != nil {
		return fmt.Errorf("caller track for mid %s: %w", mid, err)
	}
	a.add(ta)
	b.add(tb)
	return nil
}

// newTrack makes the track of one m-line with the Receiver of what this user sends (none yet when
// exts is nil: the callee's is made once its transceiver exists).
func (l *leg) newTrack(mid string, chosen webrtc.RTPCodecParameters, exts []webrtc.RTPHeaderExtensionParameter, rids []string, ridOrder string) *track {
	t := &track{mid: mid, codec: media.CodecByName(chosen.MimeType), cap: chosen.RTPCodecCapability, layerOf: media.SimulcastLayers(rids, ridOrder), reported: policy.NoLayer}
	t.video = t.codec.IsVideo()
	if exts != nil {
		t.recv = l.newReceiver(mid, chosen, exts, len(rids) > 1)
	}
	return t
}

// newReceiver makes the Receiver of what this leg's user sends; its keyframe requests go to the
// user's browser as PLI.
func (l *leg) newReceiver(mid string, chosen webrtc.RTPCodecParameters, exts []webrtc.RTPHeaderExtensionParameter, simulcast bool) *sfu.Receiver {
	uris := map[string]int{}
	for _, e := range exts {
		uris[e.URI] = e.ID
	}
	return sfu.NewReceiver(sfu.ReceiverConfig{
		ID: l.s.username + "/" + mid, Codec: media.CodecByName(chosen.MimeType), Simulcast: simulcast,
		Extensions: sfu.ExtIDsFrom(uris), Batcher: l.peer.Batcher(),
	}, l.peer.RequestKeyframe)
}

// newDown makes the DownTrack that sends this leg's user what the other user sends on src's
// m-line. It forwards once this user's PeerConnection is up (ready).
func (l *leg) newDown(src *track) *sfu.DownTrack {
	d := sfu.NewDownTrack(src.recv, sfu.DownTrackConfig{
		ID: "videocall-" + src.mid, StreamID: "videocall", Codec: src.cap,
		RespondNACK: true,
		// The track is this leg's of the m-line, registered by add before media flows.
		OnLayerChange: func(cur sfu.Layer) {
			l.mu.Lock()
			t := l.tracks[src.mid]
			l.mu.Unlock()
			if t != nil {
				l.layerChanged(t, src, cur)
			}
		},
	})
	d.SetPaused(true)
	return d
}

// add registers a track and puts its down-track under the leg's allocation.
func (l *leg) add(t *track) {
	l.mu.Lock()
	l.tracks[t.mid] = t
	l.mu.Unlock()
	go t.down.ReadRTCP(t.sender)
	if t.video {
		l.alloc.AddTrack(t.down, sfu.TrackOptions{Max: policy.TopLayer})
	}
}

package audiobridge

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/internal/media"
	"github.com/strata-rtc/strata/internal/peer"
	"github.com/strata-rtc/strata/internal/plugin"
	"github.com/strata-rtc/strata/internal/sfu"
	"github.com/strata-rtc/strata/internal/udpbatch"
)

// sessionMedia is a participant's media on the core: the Receiver its audio arrives on, and the
// mix it hears, a LocalSource whose DownTrack sends on the same PeerConnection (or whose
// Forwarder sends to a plain-RTP participant).
type sessionMedia struct {
	codec media.Codec
	pt    uint8 // the payload type the participant sends
	recv  *sfu.Receiver
	out   *mixOut
	down  *sfu.DownTrack // nil for a plain-RTP participant
	rtp   *rtpEndpoint   // nil for a WebRTC participant
}

// newInputReceiver is the Receiver of a participant's audio. Nothing forwards it (its sinks are the
// mixer's input and the recorder), so no NACK is ever answered from its cache: the smallest does.
func newInputReceiver(c media.Codec, ext sfu.ExtIDs, batcher udpbatch.Batcher) *sfu.Receiver {
	return sfu.NewReceiver(sfu.ReceiverConfig{ID: "participant", Codec: c, Extensions: ext, Batcher: batcher, CacheSlots: 1},
		func(int, uint32) {})
}

// mixCacheSlots is the mix's retransmission cache: 320 ms of packets, enough for the NACKs of a
// participant whose PeerConnection negotiated them for audio.
const mixCacheSlots = 16

// mixOut is the mix towards one participant. Its source is written by one room's mixer at a time;
// the lock only matters for the tick during which a participant changes room.
type mixOut struct {
	mu      sync.Mutex
	src     *sfu.LocalSource
	clock   uint32 // RTP clock rate of the codec
	batcher udpbatch.Batcher
}

func newMixOut(codec media.Codec, pt uint8, batcher udpbatch.Batcher) *mixOut {
	if batcher == nil {
		batcher = udpbatch.None
	}
	src := sfu.NewLocalSource(sfu.ReceiverConfig{ID: "mix", Codec: codec, Batcher: batcher, CacheSlots: mixCacheSlots}, plugin.RandomUint32(), pt)
	return &mixOut{src: src, clock: codec.ClockRate(), batcher: batcher}
}

// write sends one tick's packet; tick counts 20 ms periods since the room's mixer started.
func (o *mixOut) write(pkt []byte, tick uint64, now time.Duration) {
	if len(pkt) == 0 {
		return
	}
	ts := uint32(tick * uint64(o.clock/50))
	o.mu.Lock()
	o.src.Write(pkt, ts, false, now)
	o.mu.Unlock()
}

func (md *sessionMedia) close() {
	if md.down != nil {
		md.down.Stop()
	}
	if md.rtp != nil {
		md.rtp.close()
	}
	md.out.src.Close()
	md.recv.Close()
}

func (md *sessionMedia) query(q map[string]any) {
	st := md.recv.Stats()
	q["media"] = map[string]any{"codec": md.codec.String(), "packets_in": st.Packets, "malformed": st.MalformedRTP + st.MalformedPayload}
}

func (s *session) mediaOf() *sessionMedia {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.media
}

// negotiate answers a participant's offer: one audio m-line, in the codec it joined with, whose
// incoming track feeds a Receiver and whose outgoing one carries the mix. A later offer (an ICE
// restart, a renegotiation) keeps the media.
func (s *session) negotiate(ctx context.Context, m *member, jsep *plugin.JSEP) (*plugin.JSEP, *Error) {
	if jsep.Type != "offer" {
		return nil, errorf(ErrInvalidSDP, "Unsupported SDP type '%s'", jsep.Type)
	}
	s.mu.Lock()
	pluginOffered := s.pluginOffered
	s.mu.Unlock()
	if pluginOffered {
		return nil, errorf(ErrInvalidSDP, "Received an offer on a plugin-offered session")
	}
	p, err := s.h.Peer(peer.WithoutNACKResponder())
	if err != nil {
		return nil, errorf(ErrUnknown, "No PeerConnection: %v", err)
	}
	var built *sessionMedia
	prepare := peer.BeforeLocal(func(pc *webrtc.PeerConnection) error {
		md, err := s.prepareMedia(pc, p, m)
		built = md
		return err
	})
	answer, err := p.Answer(ctx, webrtc.SessionDescription{Type: webrtc.SDPTypeOffer, SDP: jsep.SDP}, prepare)
	if err != nil {
		if built != nil {
			built.close()
		}
		return nil, errorf(ErrInvalidSDP, "Error parsing offer: %v", err)
	}
	if built != nil {
		s.mu.Lock()
		s.media = built
		s.mu.Unlock()
		if err := m.attach(built); err != nil {
			return nil, errorf(ErrUnknown, "%v", err)
		}
	}
	return &plugin.JSEP{Type: "answer", SDP: answer.SDP}, nil
}

// prepareMedia runs between applying the offer and creating the answer: the first new audio
// transceiver gets the member's codec, a Receiver and the mix's DownTrack. Others are left
// without a sender (Pion rejects what it cannot answer).
func (s *session) prepareMedia(pc *webrtc.PeerConnection, p *peer.Peer, m *member) (*sessionMedia, error) {
	if s.mediaOf() != nil {
		return nil, nil
	}
	for _, t := range pc.GetTransceivers() {
		if t.Kind() != webrtc.RTPCodecTypeAudio || t.Sender() != nil || t.Mid() == "" {
			continue
		}
		offered := t.Receiver().GetParameters()
		chosen, ok := media.PickCodec(offered.Codecs, []string{m.codec.String()}, "")
		if !ok || media.CodecByName(chosen.MimeType) != m.codec {
			return nil, fmt.Errorf("the offer has no %s", m.codec)
		}
		if err := t.SetCodecPreferences([]webrtc.RTPCodecParameters{chosen}); err != nil {
			return nil, err
		}
		uris := map[string]int{}
		if m.room.opts.AudioLevelExt {
			for _, e := range offered.HeaderExtensions {
				uris[e.URI] = e.ID
			}
		}
		md := &sessionMedia{codec: m.codec, pt: uint8(chosen.PayloadType)}
		md.recv = newInputReceiver(m.codec, sfu.ExtIDsFrom(uris), p.Batcher())
		md.out = newMixOut(m.codec, uint8(chosen.PayloadType), p.Batcher())
		md.down = sfu.NewDownTrack(md.out.src.Receiver(), sfu.DownTrackConfig{
			ID: "strata-mix", StreamID: "strata-audiobridge", Codec: chosen.RTPCodecCapability, RespondNACK: true,
		})
		sender, err := pc.AddTrack(md.down)
		if err != nil {
			return nil, fmt.Errorf("mix track: %w", err)
		}
		md.down.Start()
		go md.down.ReadRTCP(sender)
		p.OnTrack(func(t *webrtc.TrackRemote, _ *webrtc.RTPReceiver) { md.read(t) })
		return md, nil
	}
	return nil, fmt.Errorf("the offer has no audio")
}

// read feeds the participant's track into its Receiver, with one buffer for every packet.
func (md *sessionMedia) read(t *webrtc.TrackRemote) {
	if t.Kind() != webrtc.RTPCodecTypeAudio {
		return
	}
	md.recv.SetLayerSSRC(0, uint32(t.SSRC()))
	buf := make([]byte, 1500)
	for {
		n, _, err := t.Read(buf)
		if err != nil {
			return
		}
		md.recv.WriteRTP(0, buf[:n], sfu.Now())
	}
}

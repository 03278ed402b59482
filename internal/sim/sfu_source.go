package sim

import (
	"fmt"
	"time"
)

// layeredSource is a session's publisher: one synthetic encoder per layer (its own rate, the
// same frame model for all), frames in lockstep, each layer's packets paced at pacingFactor × its
// rate on the sender→SFU links, as a browser's pacer spreads a keyframe. Packets carry their
// layer index (0 = base).
type layeredSource struct {
	sess     *SFUSession
	encs     []*encoder
	nextSend []time.Duration
	up       Route
}

// pacingFactor is libwebrtc's: the pacer sends at 2.5 × the target rate.
const pacingFactor = 2.5

const (
	evSrcFrame int32 = iota
	evSrcPacket
)

func newLayeredSource(s *Sim, sess *SFUSession) *layeredSource {
	src := &layeredSource{sess: sess}
	for i := range sess.cfg.Layers {
		src.encs = append(src.encs, newEncoder(sess.cfg.Codec, NewRNG(s.cfg.Seed, fmt.Sprintf("sfu/%s/layer/%d", sess.cfg.Name, i))))
	}
	src.nextSend = make([]time.Duration, len(src.encs))
	src.up = Route{Links: sess.cfg.Up, Dst: sfuIngress{sess}}
	return src
}

// HandleEvent encodes one frame of every layer, or sends a paced packet.
func (src *layeredSource) HandleEvent(ev Event) {
	sess := src.sess
	now := ev.At
	if ev.Kind == evSrcPacket {
		sess.sim.Send(ev.Pkt, &src.up)
		return
	}
	if now >= sess.cfg.Stop {
		return
	}
	var next time.Duration
	for i, e := range src.encs {
		size, gap := e.frame(now, sess.cfg.Layers[i])
		if i == 0 {
			next = gap
		}
		src.packetize(now, size, int8(i))
	}
	sess.sim.Schedule(now+next, src, evSrcFrame, 0, nil)
}

func (src *layeredSource) packetize(now time.Duration, payload int, layer int8) {
	if payload <= 0 {
		return
	}
	sess := src.sess
	per := sess.sfu.cfg.PacketSize - sess.sfu.cfg.Overhead
	n := (payload + per - 1) / per
	base, extra := payload/n, payload%n
	for i := 0; i < n; i++ {
		sz := base
		if i < extra {
			sz++
		}
		p := sess.sim.NewPacket()
		p.Kind, p.Size, p.Layer, p.SentAt = KindMedia, sz+sess.sfu.cfg.Overhead, layer, now
		at := max(now, src.nextSend[layer])
		src.nextSend[layer] = at + time.Duration(float64(p.Size*8)/(pacingFactor*sess.cfg.Layers[layer])*1e9)
		sess.sim.Schedule(at, src, evSrcPacket, 0, p)
	}
}

// sfuIngress is where a session's packets reach the SFU.
type sfuIngress struct{ sess *SFUSession }

func (in sfuIngress) Receive(p *Packet) { in.sess.forward(p) }

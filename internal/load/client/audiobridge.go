package client

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/pion/sdp/v3"
	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/internal/load/mediasrc"
	"github.com/strata-rtc/strata/internal/load/rtpstats"
)

// Participant is one audio bridge participant: it joins the room, sends its voice over one
// sendrecv Opus transceiver and receives the room's mix (everyone but itself) on the same one,
// which it measures like any received stream (packets, loss, jitter, and the timing of every
// frame) and, with a Listener, decodes.
type Participant struct {
	Index int
	// ID is the participant id the server gave it.
	ID uint64

	sender
	src      mediasrc.AudioSource
	listener *Listener
	mix      *Stream
	talking  atomic.Uint64 // "talking" events received (rooms with audiolevel_event)
}

// JoinParticipant joins the env's audio bridge room as Janus's demo page does (join, then
// configure with muted: false and the offer; the answer comes in the configure event), sends src
// and waits until the PeerConnection is up. listener (nil: none) decodes the mix.
func JoinParticipant(ctx context.Context, env *Env, index int, src mediasrc.AudioSource, listener *Listener) (*Participant, error) {
	ctx, cancel := context.WithTimeout(ctx, env.JoinTimeout)
	defer cancel()
	p := &Participant{Index: index, sender: newSender(env), src: src, listener: listener,
		mix: &Stream{Kind: "audio", stats: rtpstats.New(rtpstats.Config{Kind: rtpstats.Audio, ClockRate: 48000}, env.Now())}}
	if err := p.join(ctx); err != nil {
		p.Close(context.Background())
		return nil, fmt.Errorf("audiobridge participant %d: %w", index, err)
	}
	return p, nil
}

func (p *Participant) join(ctx context.Context) error {
	var err error
	if p.c, err = p.env.Dial(ctx); err != nil {
		return err
	}
	if p.s, err = p.c.Create(ctx); err != nil {
		return err
	}
	if p.h, err = p.s.Attach(ctx, AudioBridgePlugin); err != nil {
		return err
	}
	ev, err := p.h.Message(ctx, map[string]any{"request": "join", "room": p.env.Room, "display": fmt.Sprintf("load-ab-%d", p.Index)}, nil)
	if err != nil {
		return fmt.Errorf("join: %w", err)
	}
	var joined struct {
		AudioBridge string `json:"audiobridge"`
		ID          uint64 `json:"id"`
	}
	if err := ev.DecodeData(&joined); err != nil || joined.AudioBridge != "joined" || joined.ID == 0 {
		return fmt.Errorf("join: no participant id in %s", ev.Raw)
	}
	p.ID = joined.ID
	states, track, err := p.newAudioPC(fmt.Sprintf("load-ab-%d", p.Index), p.onTrack)
	if err != nil {
		return err
	}
	offer, err := p.pc.CreateOffer(nil)
	if err != nil {
		return err
	}
	jsep, err := localDescription(ctx, p.pc, offer)
	if err != nil {
		return err
	}
	ev, err = p.h.Message(ctx, map[string]any{"request": "configure", "muted": false}, jsep)
	if err != nil {
		return fmt.Errorf("configure: %w", err)
	}
	if ev.JSEP == nil || ev.JSEP.Type != "answer" {
		return fmt.Errorf("configure: no answer in %s", ev.Raw)
	}
	if err := p.pc.SetRemoteDescription(webrtc.SessionDescription{Type: webrtc.SDPTypeAnswer, SDP: ev.JSEP.SDP}); err != nil {
		return fmt.Errorf("answer: %w", err)
	}
	p.pacer = mediasrc.NewPacer(&mediasrc.Media{}, track, nil, p.env.Now())
	p.pacer.SetAudioSource(p.src, audioLevelID(p.pc))
	if err := waitConnected(ctx, states); err != nil {
		return err
	}
	if err := waitEvent(ctx, p.h, "webrtcup"); err != nil {
		return err
	}
	p.wg.Add(2)
	go p.send()
	go p.drainEvents()
	return nil
}

// audioLevelID is the audio level extension's id in pc's negotiated answer, 0 if the server left
// it out.
func audioLevelID(pc *webrtc.PeerConnection) uint8 {
	for _, t := range pc.GetTransceivers() {
		if t.Sender() == nil {
			continue
		}
		for _, e := range t.Sender().GetParameters().HeaderExtensions {
			if e.URI == sdp.AudioLevelURI {
				return uint8(e.ID)
			}
		}
	}
	return 0
}

// onTrack measures (and, with a listener, decodes) the mix.
func (p *Participant) onTrack(track *webrtc.TrackRemote, receiver *webrtc.RTPReceiver) {
	p.readTrack(track, receiver, func(pkt []byte, at time.Duration) {
		p.mix.observe(pkt, at)
		if p.listener != nil {
			p.listener.Hear(pkt, at)
		}
	})
}

// drainEvents consumes the handle's events (others joining, leaving, talking): nothing in them
// changes what a load participant does; talking events are counted.
func (p *Participant) drainEvents() {
	defer p.wg.Done()
	for {
		select {
		case <-p.stop:
			return
		case ev, ok := <-p.h.Events():
			if !ok {
				return
			}
			var d struct {
				AudioBridge string `json:"audiobridge"`
			}
			if ev.DecodeData(&d) == nil && d.AudioBridge == "talking" {
				p.talking.Add(1)
			}
		}
	}
}

// TalkingEvents is how many "talking" events the participant received.
func (p *Participant) TalkingEvents() uint64 { return p.talking.Load() }

// Mix is the received mix's statistics.
func (p *Participant) Mix() *Stream { return p.mix }

// Listener is the participant's decoder of the mix, or nil.
func (p *Participant) Listener() *Listener { return p.listener }

package client

import (
	"context"
	"fmt"

	"github.com/pion/interceptor"
	"github.com/pion/rtcp"
	"github.com/pion/rtp"
	"github.com/pion/sdp/v3"
	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/internal/janusclient"
	"github.com/strata-rtc/strata/internal/load/mediasrc"
)

// Publisher is one publishing participant.
type Publisher struct {
	Index int
	// ID is the feed id the server gave it; PrivateID its private id (for its subscriptions).
	ID        uint64
	PrivateID uint64

	sender
	video *webrtc.RTPSender
}

// Session is the publisher's Janus session, which its own subscription shares (as janus.js does).
func (p *Publisher) Session() *janusclient.Session { return p.s }

// JoinPublisher joins the room as a publisher, publishes the run's media and waits until the
// PeerConnection is up; media then flows until Close.
func JoinPublisher(ctx context.Context, env *Env, index int) (*Publisher, error) {
	ctx, cancel := context.WithTimeout(ctx, env.JoinTimeout)
	defer cancel()
	p := &Publisher{Index: index, sender: newSender(env)}
	if err := p.join(ctx); err != nil {
		p.Close(context.Background())
		return nil, fmt.Errorf("publisher %d: %w", index, err)
	}
	return p, nil
}

func (p *Publisher) join(ctx context.Context) error {
	var err error
	if p.c, err = p.env.Dial(ctx); err != nil {
		return err
	}
	if p.s, err = p.c.Create(ctx); err != nil {
		return err
	}
	if p.h, err = p.s.Attach(ctx, Plugin); err != nil {
		return err
	}
	ev, err := p.h.Message(ctx, map[string]any{"request": "join", "ptype": "publisher", "room": p.env.Room,
		"display": fmt.Sprintf("load-pub-%d", p.Index)}, nil)
	if err != nil {
		return fmt.Errorf("join: %w", err)
	}
	var joined struct {
		ID        uint64 `json:"id"`
		PrivateID uint64 `json:"private_id"`
	}
	if err := ev.DecodeData(&joined); err != nil || joined.ID == 0 {
		return fmt.Errorf("join: no publisher id in %s", ev.Raw)
	}
	p.ID, p.PrivateID = joined.ID, joined.PrivateID
	states, err := p.newPC()
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
	video := len(p.env.Media.Video) > 0
	ev, err = p.h.Message(ctx, map[string]any{"request": "configure", "audio": true, "video": video}, jsep)
	if err != nil {
		return fmt.Errorf("configure: %w", err)
	}
	if ev.JSEP == nil || ev.JSEP.Type != "answer" {
		return fmt.Errorf("configure: no answer in %s", ev.Raw)
	}
	if err := p.pc.SetRemoteDescription(webrtc.SessionDescription{Type: webrtc.SDPTypeAnswer, SDP: ev.JSEP.SDP}); err != nil {
		return fmt.Errorf("answer: %w", err)
	}
	p.markSimulcast()
	if p.env.Voice != nil {
		p.pacer.SetAudioSource(p.env.Voice(p.Index), audioLevelID(p.pc))
	}
	if err := waitConnected(ctx, states); err != nil {
		return err
	}
	// The server makes a publisher a feed others can subscribe to once its own side of the
	// PeerConnection is up, which it announces with webrtcup.
	if err := waitEvent(ctx, p.h, "webrtcup"); err != nil {
		return err
	}
	p.wg.Add(2)
	go p.send()
	go p.drainEvents()
	return nil
}

// newPC creates the PeerConnection with an Opus track and the VP8 layers (one track per rid,
// highest first, sent as simulcast encodings of one sender).
func (p *Publisher) newPC() (<-chan webrtc.PeerConnectionState, error) {
	pc, states, err := p.env.newPC()
	if err != nil {
		return nil, err
	}
	p.pc = pc
	stream := fmt.Sprintf("load-pub-%d", p.Index)
	audio, err := webrtc.NewTrackLocalStaticRTP(webrtc.RTPCodecCapability{MimeType: webrtc.MimeTypeOpus, ClockRate: 48000, Channels: 2}, "audio", stream)
	if err != nil {
		return nil, err
	}
	as, err := pc.AddTrack(audio)
	if err != nil {
		return nil, err
	}
	var writers []mediasrc.Writer
	clips := p.env.Media.Video
	simulcast := len(clips) > 1
	var vs *webrtc.RTPSender
	for i, clip := range clips {
		var opts []func(*webrtc.TrackLocalStaticRTP)
		if simulcast {
			opts = append(opts, webrtc.WithRTPStreamID(clip.Layer.RID))
		}
		tr, err := webrtc.NewTrackLocalStaticRTP(webrtc.RTPCodecCapability{MimeType: webrtc.MimeTypeVP8, ClockRate: 90000}, "video", stream, opts...)
		if err != nil {
			return nil, err
		}
		if i == 0 {
			if vs, err = pc.AddTrack(tr); err != nil {
				return nil, err
			}
			p.video = vs
		} else if err := vs.AddEncoding(tr); err != nil {
			return nil, err
		}
		writers = append(writers, tr)
	}
	p.pacer = mediasrc.NewPacer(p.env.Media, audio, writers, p.env.Now())
	p.wg.Add(1)
	go p.readRTCP(as.ReadRTCP, -1)
	for i, clip := range clips {
		read := vs.ReadRTCP
		if simulcast {
			rid := clip.Layer.RID
			read = func() ([]rtcp.Packet, interceptor.Attributes, error) { return vs.ReadSimulcastRTCP(rid) }
		}
		p.wg.Add(1)
		go p.readRTCP(read, i)
	}
	return states, nil
}

// markSimulcast makes every video packet carry the mid and its layer's rid, as a browser's do:
// Pion does not add them, and a receiver needs them to tell the layers apart.
func (p *Publisher) markSimulcast() {
	if p.video == nil || len(p.env.Media.Video) < 2 {
		return
	}
	var midID, ridID int
	for _, e := range p.video.GetParameters().HeaderExtensions {
		switch e.URI {
		case sdp.SDESMidURI:
			midID = e.ID
		case sdp.SDESRTPStreamIDURI:
			ridID = e.ID
		}
	}
	mid := ""
	for _, t := range p.pc.GetTransceivers() {
		if t.Sender() == p.video {
			mid = t.Mid()
		}
	}
	for i, clip := range p.env.Media.Video {
		var h rtp.Header // built once here, so the pacer sends the same extensions without allocating
		if midID > 0 && mid != "" {
			_ = h.SetExtension(uint8(midID), []byte(mid))
		}
		if ridID > 0 {
			_ = h.SetExtension(uint8(ridID), []byte(clip.Layer.RID))
		}
		p.pacer.SetVideoExtensions(i, h.Extensions)
	}
}

// readRTCP drains a sender's RTCP (which runs the NACK responder) and turns PLI/FIR for a video
// layer into a keyframe.
func (p *Publisher) readRTCP(read func() ([]rtcp.Packet, interceptor.Attributes, error), layer int) {
	defer p.wg.Done()
	for {
		pkts, _, err := read()
		if err != nil {
			return
		}
		if layer < 0 {
			continue
		}
		for _, pkt := range pkts {
			switch pkt.(type) {
			case *rtcp.PictureLossIndication, *rtcp.FullIntraRequest:
				p.pacer.RequestKeyframe(layer)
			}
		}
	}
}

// drainEvents consumes the handle's events (other publishers, talking, media): nothing in them
// changes what a load publisher does, and an unread channel would only drop them.
func (p *Publisher) drainEvents() {
	defer p.wg.Done()
	for {
		select {
		case <-p.stop:
			return
		case _, ok := <-p.h.Events():
			if !ok {
				return
			}
		}
	}
}

package client

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/internal/janusclient"
	"github.com/strata-rtc/strata/internal/load/mediasrc"
)

// sender is what a publisher and an audio bridge participant share: a Janus session and handle, a
// PeerConnection, and a pacer sending media on it until Close.
type sender struct {
	env   *Env
	c     *janusclient.Client
	s     *janusclient.Session
	h     *janusclient.Handle
	pc    *webrtc.PeerConnection
	pacer *mediasrc.Pacer

	stop chan struct{}
	wg   sync.WaitGroup
	once sync.Once
}

func newSender(env *Env) sender { return sender{env: env, stop: make(chan struct{})} }

// Sent returns what has been sent so far.
func (p *sender) Sent() mediasrc.PacerStats {
	if p.pacer == nil {
		return mediasrc.PacerStats{}
	}
	return p.pacer.Stats()
}

// send paces the media until Close.
func (p *sender) send() {
	defer p.wg.Done()
	p.pacer.Begin(p.env.Now())
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-t.C:
		}
		next := p.pacer.Step(p.env.Now())
		t.Reset(max(next-p.env.Now(), 0))
	}
}

// Close stops the media, destroys the session on the server (which leaves the room) and closes
// the PeerConnection.
func (p *sender) Close(ctx context.Context) {
	p.once.Do(func() {
		close(p.stop)
		var errs []error
		if p.s != nil {
			errs = append(errs, p.s.Destroy(ctx))
		}
		if p.pc != nil {
			errs = append(errs, p.pc.Close())
		}
		if p.c != nil {
			errs = append(errs, p.c.Close())
		}
		_ = errors.Join(errs...) // the server may already be gone; nothing to do about it
		p.wg.Wait()
	})
}

// newAudioPC creates the PeerConnection with one sendrecv Opus transceiver, as a browser's
// getUserMedia({audio: true}) track; onTrack gets what the server sends back on it.
func (p *sender) newAudioPC(label string, onTrack func(*webrtc.TrackRemote, *webrtc.RTPReceiver)) (<-chan webrtc.PeerConnectionState, *webrtc.TrackLocalStaticRTP, error) {
	pc, states, err := p.env.newPC()
	if err != nil {
		return nil, nil, err
	}
	p.pc = pc
	pc.OnTrack(onTrack)
	track, err := webrtc.NewTrackLocalStaticRTP(webrtc.RTPCodecCapability{MimeType: webrtc.MimeTypeOpus, ClockRate: 48000, Channels: 2},
		"audio", label)
	if err != nil {
		return nil, nil, err
	}
	sender, err := pc.AddTrack(track)
	if err != nil {
		return nil, nil, err
	}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		drainRTCP(sender)
	}()
	return states, track, nil
}

// readTrack hands every RTP packet of a received track to observe, with its arrival time, until
// the track ends; the receiver's RTCP is read too (sender reports feed the receiver-report
// interceptor).
func (p *sender) readTrack(track *webrtc.TrackRemote, receiver *webrtc.RTPReceiver, observe func(pkt []byte, at time.Duration)) {
	ReadTrack(&p.wg, track, receiver, func(pkt []byte) { observe(pkt, p.env.Now()) })
}

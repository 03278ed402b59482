package sfuflow

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/pion/ice/v4"
	"github.com/pion/interceptor"
	"github.com/pion/interceptor/pkg/report"
	"github.com/pion/interceptor/pkg/twcc"
	"github.com/pion/logging"
	"github.com/pion/transport/v4"
	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/internal/emu/endpoint"
	"github.com/strata-rtc/strata/internal/janusclient"
	"github.com/strata-rtc/strata/internal/load/client"
)

// subscriberAPI is a receiver's Pion: transport-wide feedback (strata's estimator runs on it)
// and receiver reports (the probe policy's loss), and no NACKs: the simulator's SFU does not
// retransmit, so a packet the downlink drops stays lost, as there.
func subscriberAPI(n transport.Net) (*webrtc.API, error) {
	var se webrtc.SettingEngine
	se.SetNet(n)
	se.SetICEMulticastDNSMode(ice.MulticastDNSModeDisabled)
	se.SetNetworkTypes([]webrtc.NetworkType{webrtc.NetworkTypeUDP4})
	quiet := logging.NewDefaultLoggerFactory()
	quiet.DefaultLogLevel = logging.LogLevelDisabled
	se.LoggerFactory = quiet
	me := &webrtc.MediaEngine{}
	if err := me.RegisterDefaultCodecs(); err != nil {
		return nil, err
	}
	reg := &interceptor.Registry{}
	if err := webrtc.ConfigureRTCPReportsWithOptions(reg, []report.ReceiverOption{report.WithReceiverLoggerFactory(quiet)},
		report.WithSenderLoggerFactory(quiet)); err != nil {
		return nil, err
	}
	if err := webrtc.ConfigureTWCCSenderWithOptions(me, reg, twcc.WithLoggerFactory(quiet)); err != nil {
		return nil, err
	}
	return webrtc.NewAPI(webrtc.WithSettingEngine(se), webrtc.WithMediaEngine(me), webrtc.WithInterceptorRegistry(reg)), nil
}

// subscriber receives one feed's video from the videoroom and counts it per layer.
type subscriber struct {
	c     *janusclient.Client
	s     *janusclient.Session
	h     *janusclient.Handle
	pc    *webrtc.PeerConnection
	count packetCounter
	rec   endpoint.Recorder
	now   func() time.Duration
	wg    sync.WaitGroup
	once  sync.Once
}

// subscribe joins room as a subscriber of feed's video (mid) with opaque as the handle's
// opaque_id (netctl maps it to the receiver's node) and waits until media can flow.
func subscribe(ctx context.Context, api *webrtc.API, httpc *http.Client, server string, room, feed uint64, mid, opaque string, sub *subscriber) error {
	var err error
	if sub.c, err = janusclient.Dial(ctx, server, janusclient.WithHTTPClient(httpc)); err != nil {
		return err
	}
	if sub.s, err = sub.c.Create(ctx); err != nil {
		return err
	}
	if sub.h, err = sub.s.AttachOpaque(ctx, client.Plugin, opaque); err != nil {
		return err
	}
	if sub.pc, err = api.NewPeerConnection(webrtc.Configuration{}); err != nil {
		return err
	}
	connected := make(chan struct{})
	var once sync.Once
	sub.pc.OnConnectionStateChange(func(s webrtc.PeerConnectionState) {
		if s == webrtc.PeerConnectionStateConnected {
			once.Do(func() { close(connected) })
		}
	})
	sub.pc.OnTrack(sub.onTrack)
	ev, err := sub.h.Message(ctx, map[string]any{"request": "join", "ptype": "subscriber", "room": room,
		"streams": []map[string]any{{"feed": feed, "mid": mid}}}, nil)
	if err != nil {
		return fmt.Errorf("join: %w", err)
	}
	if ev.JSEP == nil || ev.JSEP.Type != "offer" {
		return fmt.Errorf("join: no offer in %s", ev.Raw)
	}
	if err := sub.pc.SetRemoteDescription(webrtc.SessionDescription{Type: webrtc.SDPTypeOffer, SDP: ev.JSEP.SDP}); err != nil {
		return fmt.Errorf("offer: %w", err)
	}
	answer, err := sub.pc.CreateAnswer(nil)
	if err != nil {
		return err
	}
	gathered := webrtc.GatheringCompletePromise(sub.pc)
	if err := sub.pc.SetLocalDescription(answer); err != nil {
		return err
	}
	select {
	case <-gathered:
	case <-ctx.Done():
		return fmt.Errorf("ICE gathering: %w", ctx.Err())
	}
	trickle := false
	jsep := &janusclient.JSEP{Type: "answer", SDP: sub.pc.LocalDescription().SDP, Trickle: &trickle}
	if _, err := sub.h.Message(ctx, map[string]any{"request": "start", "room": room}, jsep); err != nil {
		return fmt.Errorf("start: %w", err)
	}
	sub.wg.Add(1)
	go sub.drainEvents()
	select {
	case <-connected:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("subscriber PeerConnection not connected: %w", ctx.Err())
	}
}

// onTrack counts the video's packets (client.ReadTrack keeps the receiver-report interceptor
// fed).
func (sub *subscriber) onTrack(track *webrtc.TrackRemote, receiver *webrtc.RTPReceiver) {
	video := track.Kind() == webrtc.RTPCodecTypeVideo
	client.ReadTrack(&sub.wg, track, receiver, func(pkt []byte) {
		if !video {
			return
		}
		if size := sub.count.observe(pkt, sub.now()); size > 0 && sub.rec != nil {
			sub.rec.Goodput(size)
		}
	})
}

// drainEvents reads the handle's events (layer changes, media): nothing in them changes what
// the subscriber does, and an unread channel would only drop them.
func (sub *subscriber) drainEvents() {
	defer sub.wg.Done()
	for range sub.h.Events() {
	}
}

// close leaves the room and releases the PeerConnection.
func (sub *subscriber) close() error {
	var errs []error
	sub.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		if sub.s != nil {
			_ = sub.s.Destroy(ctx) // the server may be gone already
		}
		if sub.pc != nil {
			errs = append(errs, sub.pc.Close())
		}
		if sub.c != nil {
			_ = sub.c.Close()
		}
		sub.wg.Wait()
	})
	return errors.Join(errs...)
}

package client

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/internal/janusclient"
	"github.com/strata-rtc/strata/internal/load/mediasrc"
	"github.com/strata-rtc/strata/internal/load/rtpstats"
)

// SIPPlugin is the SIP gateway's package name.
const SIPPlugin = "janus.plugin.sip"

// Caller is one janus.plugin.sip caller, as Janus's siptest demo page makes one: it registers as
// a guest (no REGISTER is sent), calls a URI with an offer of one sendrecv Opus transceiver,
// sends the Opus clip once the call is accepted, and measures what comes back: as a received
// stream (packets, loss, jitter, timing), as an echo of its own payloads (Echo) and, with a
// Listener, by decoding it.
type Caller struct {
	Index int
	// Setup is the time from the call request to the accepted event (the SIP side's INVITE to
	// 200 OK, through the server); Connected from the call request to the PeerConnection being up.
	Setup, Connected time.Duration

	sender
	echo     Echo
	listener *Listener
	in       *Stream

	mu     sync.Mutex
	hangup string // the reason of a hangup the caller did not ask for
}

// sipEvent is the plugin's event: {"sip": "event", "result": {"event": ..., "code", "reason"}}.
type sipEvent struct {
	SIP    string `json:"sip"`
	Result struct {
		Event  string `json:"event"`
		Code   int    `json:"code"`
		Reason string `json:"reason"`
	} `json:"result"`
}

// Call registers caller index as a guest and calls uri, then sends the env's Opus clip until
// Close. listener (nil: none) decodes what comes back.
func Call(ctx context.Context, env *Env, index int, uri string, listener *Listener) (*Caller, error) {
	ctx, cancel := context.WithTimeout(ctx, env.JoinTimeout)
	defer cancel()
	c := &Caller{Index: index, sender: newSender(env), listener: listener,
		in: &Stream{Kind: "audio", stats: rtpstats.New(rtpstats.Config{Kind: rtpstats.Audio, ClockRate: 48000}, env.Now())}}
	if err := c.call(ctx, uri); err != nil {
		c.Close(context.Background())
		return nil, fmt.Errorf("sip caller %d: %w", index, err)
	}
	return c, nil
}

func (c *Caller) call(ctx context.Context, uri string) error {
	var err error
	if c.c, err = c.env.Dial(ctx); err != nil {
		return err
	}
	if c.s, err = c.c.Create(ctx); err != nil {
		return err
	}
	if c.h, err = c.s.Attach(ctx, SIPPlugin); err != nil {
		return err
	}
	if err := c.register(ctx, uri); err != nil {
		return err
	}
	states, track, err := c.newAudioPC(fmt.Sprintf("load-sip-%d", c.Index), c.onTrack)
	if err != nil {
		return err
	}
	offer, err := c.pc.CreateOffer(nil)
	if err != nil {
		return err
	}
	jsep, err := localDescription(ctx, c.pc, offer)
	if err != nil {
		return err
	}
	start := c.env.Now()
	ev, err := c.h.Message(ctx, map[string]any{"request": "call", "uri": uri}, jsep)
	if err != nil {
		return fmt.Errorf("call: %w", err)
	}
	answer, err := c.accepted(ctx, ev)
	if err != nil {
		return err
	}
	c.Setup = c.env.Now() - start
	if err := c.pc.SetRemoteDescription(webrtc.SessionDescription{Type: webrtc.SDPTypeAnswer, SDP: answer.SDP}); err != nil {
		return fmt.Errorf("answer: %w", err)
	}
	c.pacer = mediasrc.NewPacer(c.env.Media, echoWriter{w: track, echo: &c.echo, now: c.env.Now}, nil, c.env.Now())
	if err := waitConnected(ctx, states); err != nil {
		return err
	}
	c.Connected = c.env.Now() - start
	c.wg.Add(2)
	go c.send()
	go c.watch()
	return nil
}

// register registers as a guest with a user on the callee's host: Janus needs a SIP identity
// even when it sends no REGISTER.
func (c *Caller) register(ctx context.Context, uri string) error {
	host := uri[strings.LastIndex(uri, "@")+1:]
	if i := strings.IndexAny(host, ":;>"); i >= 0 {
		host = host[:i]
	}
	ev, err := c.h.Message(ctx, map[string]any{"request": "register", "type": "guest",
		"username": fmt.Sprintf("sip:load-%d@%s", c.Index, host)}, nil)
	if err != nil {
		return fmt.Errorf("register: %w", err)
	}
	if e := decodeSIP(ev); e.Result.Event != "registered" {
		return fmt.Errorf("register: expected registered, got %s", ev.Raw)
	}
	return nil
}

// accepted reads the call request's own event: calling (or, when the far end answers at once,
// already a progress event or accepted: the plugin may send those with the request's
// transaction too), then waits for accepted if need be.
func (c *Caller) accepted(ctx context.Context, ev *janusclient.Event) (*janusclient.JSEP, error) {
	switch e := decodeSIP(ev); e.Result.Event {
	case "accepted":
		if ev.JSEP == nil || ev.JSEP.Type != "answer" {
			return nil, fmt.Errorf("accepted without an answer: %s", ev.Raw)
		}
		return ev.JSEP, nil
	case "calling", "ringing", "proceeding", "progress":
		return waitAccepted(ctx, c.h)
	}
	return nil, fmt.Errorf("call: expected calling, got %s", ev.Raw)
}

// waitAccepted waits for the accepted event and its answer; progress events (ringing,
// proceeding, progress) are skipped, a hangup or an error ends the call.
func waitAccepted(ctx context.Context, h *janusclient.Handle) (*janusclient.JSEP, error) {
	for {
		select {
		case ev, ok := <-h.Events():
			if !ok {
				return nil, errors.New("handle closed while waiting for accepted")
			}
			if pe := ev.PluginError(); pe != nil {
				return nil, fmt.Errorf("call: %w", pe)
			}
			e := decodeSIP(ev)
			switch e.Result.Event {
			case "accepted":
				if ev.JSEP == nil || ev.JSEP.Type != "answer" {
					return nil, fmt.Errorf("accepted without an answer: %s", ev.Raw)
				}
				return ev.JSEP, nil
			case "hangup":
				return nil, fmt.Errorf("call hung up before it was accepted: %d %s", e.Result.Code, e.Result.Reason)
			}
		case <-ctx.Done():
			return nil, fmt.Errorf("no accepted event: %w", ctx.Err())
		}
	}
}

func decodeSIP(ev *janusclient.Event) sipEvent {
	var e sipEvent
	_ = ev.DecodeData(&e) // an event that is not the plugin's has no result
	return e
}

// onTrack measures, matches and (with a listener) decodes what comes back.
func (c *Caller) onTrack(track *webrtc.TrackRemote, receiver *webrtc.RTPReceiver) {
	c.readTrack(track, receiver, func(pkt []byte, at time.Duration) {
		c.in.observe(pkt, at)
		c.echo.Heard(pkt, at)
		if c.listener != nil {
			c.listener.Hear(pkt, at)
		}
	})
}

// watch notes a hangup the caller did not ask for (the far end or the server ended the call).
func (c *Caller) watch() {
	defer c.wg.Done()
	for {
		select {
		case <-c.stop:
			return
		case ev, ok := <-c.h.Events():
			if !ok {
				return
			}
			if e := decodeSIP(ev); e.Result.Event == "hangup" || ev.Janus == "hangup" {
				c.mu.Lock()
				c.hangup = strings.TrimSpace(fmt.Sprintf("%d %s%s", e.Result.Code, e.Result.Reason, ev.Reason))
				c.mu.Unlock()
			}
		}
	}
}

// HungUp is the reason the call ended before Close, or "".
func (c *Caller) HungUp() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.hangup
}

// Echo is the caller's echo matching totals.
func (c *Caller) Echo() EchoCounts { return c.echo.Counts() }

// In is the statistics of what came back.
func (c *Caller) In() *Stream { return c.in }

// Listener is the caller's decoder of the echo, or nil.
func (c *Caller) Listener() *Listener { return c.listener }

// Close hangs up (the server sends BYE), then closes the session and the PeerConnection.
func (c *Caller) Close(ctx context.Context) {
	if c.h != nil {
		hctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		_, _ = c.h.Message(hctx, map[string]any{"request": "hangup"}, nil) // the call may be over already
		cancel()
	}
	c.sender.Close(ctx)
}

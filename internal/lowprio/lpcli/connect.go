// Package lpcli is `strata lowprio get|put`: it reaches a strata server through the Janus API
// (the echotest plugin, offering a data section only), opens one low-priority channel on that
// PeerConnection and moves a file or a generated stream at low priority (docs/LOWPRIO.md).
package lpcli

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/internal/janusclient"
)

// Plugin is the plugin the client attaches to: any plugin's PeerConnection serves low-priority
// channels, and the echotest takes an offer without media.
const Plugin = "janus.plugin.echotest"

// Conn is a PeerConnection to a strata server through one echotest handle.
type Conn struct {
	PC     *webrtc.PeerConnection
	client *janusclient.Client
	sess   *janusclient.Session
	handle *janusclient.Handle
}

// Connect attaches to the echotest on the Janus API at url, lets setup create the data channels
// the offer carries (at least one, so the offer has an application section), negotiates without
// trickle and returns once the PeerConnection is connected.
func Connect(ctx context.Context, url string, setup func(*webrtc.PeerConnection) error, opts ...janusclient.Option) (_ *Conn, err error) {
	c := &Conn{}
	defer func() {
		if err != nil {
			_ = c.Close()
		}
	}()
	if c.client, err = janusclient.Dial(ctx, url, opts...); err != nil {
		return nil, err
	}
	if c.sess, err = c.client.Create(ctx); err != nil {
		return nil, err
	}
	if c.handle, err = c.sess.Attach(ctx, Plugin); err != nil {
		return nil, err
	}
	var se webrtc.SettingEngine
	se.SetIncludeLoopbackCandidate(true) // a server on the same host may offer only loopback
	if c.PC, err = webrtc.NewAPI(webrtc.WithSettingEngine(se)).NewPeerConnection(webrtc.Configuration{}); err != nil {
		return nil, err
	}
	if err := setup(c.PC); err != nil {
		return nil, err
	}
	connected := watchConnected(c.PC)
	if err := c.negotiate(ctx); err != nil {
		return nil, err
	}
	select {
	case err := <-connected:
		if err != nil {
			return nil, err
		}
		return c, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("lowprio: connecting to %s: %w", url, ctx.Err())
	}
}

// negotiate sends the offer with every candidate in it and applies the server's answer.
func (c *Conn) negotiate(ctx context.Context) error {
	offer, err := c.PC.CreateOffer(nil)
	if err != nil {
		return err
	}
	gathered := webrtc.GatheringCompletePromise(c.PC)
	if err := c.PC.SetLocalDescription(offer); err != nil {
		return err
	}
	select {
	case <-gathered:
	case <-ctx.Done():
		return fmt.Errorf("lowprio: ICE gathering: %w", ctx.Err())
	}
	ev, err := c.handle.Message(ctx, map[string]any{"audio": false, "video": false, "data": true},
		&janusclient.JSEP{Type: "offer", SDP: c.PC.LocalDescription().SDP})
	if err != nil {
		return fmt.Errorf("lowprio: offer: %w", err)
	}
	if ev.JSEP == nil || ev.JSEP.Type != "answer" {
		return fmt.Errorf("lowprio: the server answered the offer without an SDP answer: %s", ev.Raw)
	}
	return c.PC.SetRemoteDescription(webrtc.SessionDescription{Type: webrtc.SDPTypeAnswer, SDP: ev.JSEP.SDP})
}

// watchConnected reports nil once pc is connected, or an error if it fails or closes first.
func watchConnected(pc *webrtc.PeerConnection) <-chan error {
	done := make(chan error, 1)
	var once sync.Once
	pc.OnConnectionStateChange(func(s webrtc.PeerConnectionState) {
		switch s {
		case webrtc.PeerConnectionStateConnected:
			once.Do(func() { done <- nil })
		case webrtc.PeerConnectionStateFailed, webrtc.PeerConnectionStateClosed:
			once.Do(func() { done <- fmt.Errorf("lowprio: PeerConnection %s", s) })
		}
	})
	return done
}

// Close hangs up: the PeerConnection, the handle, the session and the client.
func (c *Conn) Close() error {
	var errs []error
	if c.PC != nil {
		errs = append(errs, c.PC.Close())
	}
	if c.sess != nil {
		ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
		errs = append(errs, c.sess.Destroy(ctx))
		cancel()
	}
	if c.client != nil {
		errs = append(errs, c.client.Close())
	}
	return errors.Join(errs...)
}

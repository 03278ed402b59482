package whip

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"

	"github.com/strata-rtc/strata/internal/gateway"
	"github.com/strata-rtc/strata/internal/janus"
)

// WHIP and WHEP are a transport in front of the plugins, like simple-whip-server in front of Janus but
// in-process: every resource is a Janus session with one handle, driven through the gateway with the
// plugin's own requests. A WHIP publisher is therefore an ordinary videoroom publisher (Janus-API
// subscribers, recording and forwarders see it), and nothing here touches media.

// janusClient is the Handler's side of the gateway: it submits requests and is the gateway.Sink of
// the sessions it creates, routing each event to the request waiting for it, or ending the resource
// whose PeerConnection went away.
type janusClient struct {
	gw *gateway.Gateway

	mu      sync.Mutex
	next    uint64
	waiters map[string]chan janus.Message
	ended   func(sid uint64, why string) // a resource's session or media ended on its own
}

// pluginError is a plugin's refusal (error_code in plugindata) or a core error.
type pluginError struct {
	Code   int
	Reason string
	Core   bool
	Plugin string // whose error code it is ("janus.plugin.videoroom")
}

func (e *pluginError) Error() string { return fmt.Sprintf("%d: %s", e.Code, e.Reason) }

// event is the part of a Janus reply or event WHIP needs.
type event struct {
	Janus     string `json:"janus"`
	SessionID uint64 `json:"session_id"`
	Data      struct {
		ID uint64 `json:"id"`
	} `json:"data"`
	PluginData *struct {
		Plugin string         `json:"plugin"`
		Data   map[string]any `json:"data"`
	} `json:"plugindata"`
	JSEP *struct {
		Type string `json:"type"`
		SDP  string `json:"sdp"`
	} `json:"jsep"`
	Error *janus.Error `json:"error"`
}

func decodeEvent(m janus.Message) (event, error) {
	var ev event
	raw, err := json.Marshal(m)
	if err != nil {
		return ev, err
	}
	err = json.Unmarshal(raw, &ev)
	return ev, err
}

// fail turns an error reply or a plugin error event into a pluginError (nil when it is neither).
func (ev event) fail() *pluginError {
	if ev.Error != nil {
		return &pluginError{Code: int(ev.Error.Code), Reason: ev.Error.Reason, Core: true}
	}
	if ev.PluginData == nil {
		return nil
	}
	code, ok := ev.PluginData.Data["error_code"].(float64)
	if !ok {
		return nil
	}
	reason, _ := ev.PluginData.Data["error"].(string)
	return &pluginError{Code: int(code), Reason: reason, Plugin: ev.PluginData.Plugin}
}

// call submits one request (a map with "janus" and its members) and returns its reply; for a plugin
// `message` answered with `ack` it waits for the event carrying the result.
func (c *janusClient) call(ctx context.Context, from gateway.Origin, req map[string]any) (event, error) {
	c.mu.Lock()
	c.next++
	tx := "whip-" + strconv.FormatUint(c.next, 36)
	ch := make(chan janus.Message, 2)
	c.waiters[tx] = ch // before Submit: the event can come before the ack is read
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.waiters, tx)
		c.mu.Unlock()
	}()
	req["transaction"] = tx
	raw, err := json.Marshal(req)
	if err != nil {
		return event{}, err
	}
	from.Sink, from.Trusted = c, true
	reply, err := decodeEvent(c.gw.Handle(ctx, raw, from))
	if err != nil {
		return reply, err
	}
	if pe := reply.fail(); pe != nil {
		return reply, pe
	}
	if reply.Janus != "ack" || req["janus"] != "message" {
		return reply, nil
	}
	select {
	case m := <-ch:
		ev, err := decodeEvent(m)
		if err != nil {
			return ev, err
		}
		if pe := ev.fail(); pe != nil {
			return ev, pe
		}
		return ev, nil
	case <-ctx.Done():
		return event{}, errors.New("the plugin did not answer in time")
	}
}

// Transport implements gateway.Sink.
func (c *janusClient) Transport() string { return TransportName }

// Bind implements gateway.Sink; nothing to set up, events are routed by transaction.
func (c *janusClient) Bind(uint64) {}

// Deliver implements gateway.Sink. It must not block nor call the gateway: a waiting request gets
// its event through a buffered channel, and the end of a resource is handled on another goroutine.
func (c *janusClient) Deliver(sid uint64, m janus.Message) {
	c.mu.Lock()
	ch := c.waiters[m.Transaction]
	c.mu.Unlock()
	if ch != nil && m.Janus == "event" {
		select {
		case ch <- m:
		default:
		}
		return
	}
	switch m.Janus {
	case "hangup", "detached", "timeout":
		// The PeerConnection failed or closed (ICE, DTLS, a kick, a destroyed room): a WHIP/WHEP
		// resource is its PeerConnection, so it ends too.
		if c.ended != nil {
			go c.ended(sid, m.Janus)
		}
	}
}

// Unbind implements gateway.Sink: the session was destroyed (by us, a timeout, the admin API).
func (c *janusClient) Unbind(sid uint64) {
	if c.ended != nil {
		go c.ended(sid, "session ended")
	}
}

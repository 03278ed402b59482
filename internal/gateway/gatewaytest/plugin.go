// Package gatewaytest provides plugins for testing the gateway and its transports: Echo, an
// echotest-like plugin that answers synchronously or asynchronously (and, with a real peer factory,
// answers offers with a real PeerConnection), and Failing, whose Attach always fails.
package gatewaytest

import (
	"context"
	"encoding/json"
	"errors"
	"sync"

	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/internal/plugin"
)

// EchoPackage is the package name of the Echo plugin.
const EchoPackage = "janus.plugin.testecho"

// OfferSDP is a minimal SDP that Pion's parser accepts; Echo sends it as its offer for "offer".
const OfferSDP = "v=0\r\no=- 1 2 IN IP4 127.0.0.1\r\ns=-\r\nt=0 0\r\n"

// Echo answers the requests a test needs, selected by body.request:
//
//	"sync"   success with {"testecho":"success","echo":<body>}
//	"error"  success carrying a plugin error (error_code 411)
//	"core"   core error 462 via Result.CoreError
//	"nodata" a synchronous Result without data (the gateway answers 462)
//	"panic"  the plugin panics
//	"offer"  ack, then an event carrying an offer from the plugin
//	other    ack ("I'm taking my time!"), then {"testecho":"event","result":"ok"}, with a real
//	         answer in jsep if the message carried an offer and the gateway has a peer factory
type Echo struct {
	mu        sync.Mutex
	sessions  map[uint64]*EchoSession
	destroyed bool
}

// NewEcho returns an Echo plugin.
func NewEcho() *Echo { return &Echo{sessions: map[uint64]*EchoSession{}} }

// Package implements plugin.Plugin.
func (p *Echo) Package() string { return EchoPackage }

// Info implements plugin.Plugin.
func (p *Echo) Info() plugin.Info {
	return plugin.Info{Name: "Test echo", Author: "strata", Description: "Echo plugin for tests",
		VersionString: "0.0.1", Version: 1}
}

// Attach implements plugin.Plugin.
func (p *Echo) Attach(h plugin.Handle) (plugin.Session, error) {
	s := &EchoSession{h: h, events: make(chan string, 64)}
	p.mu.Lock()
	p.sessions[h.ID()] = s
	p.mu.Unlock()
	return s, nil
}

// Destroy implements plugin.Plugin.
func (p *Echo) Destroy() {
	p.mu.Lock()
	p.destroyed = true
	p.mu.Unlock()
}

// Destroyed reports whether Destroy was called.
func (p *Echo) Destroyed() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.destroyed
}

// Session returns the plugin session of a handle, or nil.
func (p *Echo) Session(handleID uint64) *EchoSession {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.sessions[handleID]
}

// AdminMessage implements plugin.AdminMessenger: it echoes the request.
func (p *Echo) AdminMessage(_ context.Context, request json.RawMessage) any {
	return map[string]any{"testecho": "admin", "request": request}
}

// EchoSession is Echo's state for one handle; it records what the gateway called.
type EchoSession struct {
	h plugin.Handle

	mu           sync.Mutex
	transactions []string
	mediaReady   int
	mediaClosed  []string
	detached     bool
	// events receives "ready", "closed:<reason>" and "detached" as they happen.
	events chan string
}

type echoBody struct {
	Request string `json:"request"`
}

// HandleMessage implements plugin.Session.
func (s *EchoSession) HandleMessage(ctx context.Context, m plugin.Message) plugin.Result {
	s.mu.Lock()
	s.transactions = append(s.transactions, m.Transaction)
	s.mu.Unlock()
	var body echoBody
	_ = json.Unmarshal(m.Body, &body)
	switch body.Request {
	case "sync":
		return plugin.Sync(map[string]any{"testecho": "success", "echo": m.Body})
	case "error":
		return plugin.Sync(plugin.Error("testecho", 411, "Invalid request"))
	case "core":
		return plugin.Result{CoreError: 462, CoreReason: "refused by test plugin"}
	case "nodata":
		return plugin.Result{}
	case "panic":
		panic("test plugin panics on purpose")
	case "offer":
		go s.push(m.Transaction, map[string]any{"testecho": "event", "result": "offer"},
			&plugin.JSEP{Type: "offer", SDP: OfferSDP})
		return plugin.Async("I'm taking my time!")
	}
	var answer *plugin.JSEP
	if m.JSEP != nil && m.JSEP.Type == "offer" {
		a, err := s.answer(ctx, m.JSEP.SDP)
		if err != nil {
			return plugin.Sync(plugin.Error("testecho", 412, err.Error()))
		}
		answer = a
	}
	go s.push(m.Transaction, map[string]any{"testecho": "event", "result": "ok"}, answer)
	return plugin.Async("I'm taking my time!")
}

// answer negotiates with the handle's real PeerConnection.
func (s *EchoSession) answer(ctx context.Context, offer string) (*plugin.JSEP, error) {
	p, err := s.h.Peer()
	if err != nil {
		return nil, err
	}
	a, err := p.Answer(ctx, webrtc.SessionDescription{Type: webrtc.SDPTypeOffer, SDP: offer})
	if err != nil {
		return nil, err
	}
	return &plugin.JSEP{Type: "answer", SDP: a.SDP}, nil
}

func (s *EchoSession) push(tx string, data any, jsep *plugin.JSEP) {
	if err := s.h.PushEvent(tx, data, jsep); err != nil {
		s.h.Logger().Debug("push failed", "err", err)
	}
}

// Push sends an event to the client as the plugin would on its own (not in answer to a message).
func (s *EchoSession) Push(data any) error { return s.h.PushEvent("", data, nil) }

// MediaReady implements plugin.Session.
func (s *EchoSession) MediaReady() {
	s.mu.Lock()
	s.mediaReady++
	s.mu.Unlock()
	s.note("ready")
}

// MediaClosed implements plugin.Session; like echotest it tells the client with result "done".
func (s *EchoSession) MediaClosed(reason string) {
	s.mu.Lock()
	s.mediaClosed = append(s.mediaClosed, reason)
	s.mu.Unlock()
	s.note("closed:" + reason)
	s.push("", map[string]any{"testecho": "event", "result": "done"}, nil)
}

// Detach implements plugin.Session.
func (s *EchoSession) Detach() {
	s.mu.Lock()
	s.detached = true
	s.mu.Unlock()
	s.note("detached")
}

// Query implements plugin.Session.
func (s *EchoSession) Query() any {
	s.mu.Lock()
	defer s.mu.Unlock()
	return map[string]any{"messages": len(s.transactions), "media_ready": s.mediaReady}
}

func (s *EchoSession) note(ev string) {
	select {
	case s.events <- ev:
	default:
	}
}

// Events delivers "ready", "closed:<reason>" and "detached" as they happen.
func (s *EchoSession) Events() <-chan string { return s.events }

// Transactions lists the transactions of the messages handled, in the order the plugin saw them.
func (s *EchoSession) Transactions() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.transactions...)
}

// Detached reports whether Detach was called.
func (s *EchoSession) Detached() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.detached
}

// FailingPackage is the package name of the Failing plugin.
const FailingPackage = "janus.plugin.failing"

// Failing is a plugin whose Attach always fails (core error 461) and that has no admin messages.
type Failing struct{}

// Package implements plugin.Plugin.
func (Failing) Package() string { return FailingPackage }

// Info implements plugin.Plugin.
func (Failing) Info() plugin.Info {
	return plugin.Info{Name: "Failing", Version: 1, VersionString: "0.0.1"}
}

// Attach implements plugin.Plugin.
func (Failing) Attach(plugin.Handle) (plugin.Session, error) {
	return nil, errors.New("attach refused by test plugin")
}

// Destroy implements plugin.Plugin.
func (Failing) Destroy() {}

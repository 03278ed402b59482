package textroom

import (
	"context"
	"sync"
	"time"

	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/internal/peer"
	"github.com/strata-rtc/strata/internal/plugin"
)

const (
	queueSize        = 16
	negotiateTimeout = 30 * time.Second
	// label is janus.js's data channel, the one Janus's clients open.
	label = "JanusDataChannel"
)

// session is one attached handle. rooms is guarded by the plugin's mutex; the rest by mu.
type session struct {
	p *Plugin
	h plugin.Handle
	q *plugin.Queue
	// events guards the pushes: none after Detach.
	events plugin.Pusher

	rooms map[string]*participant

	mu    sync.Mutex
	setup bool
	peer  *peer.Peer
	dc    *webrtc.DataChannel // where events go: the channel the client last sent a request on
}

func newSession(p *Plugin, h plugin.Handle) *session {
	s := &session{p: p, h: h, rooms: map[string]*participant{}}
	s.q = plugin.NewQueue(queueSize, s.work)
	return s
}

// HandleMessage answers the management requests at once and queues setup, ack and restart.
func (s *session) HandleMessage(_ context.Context, m plugin.Message) plugin.Result {
	req, _, err := plugin.DecodeRequest(m.Body, &codes)
	if err != nil {
		return plugin.Sync(errorReply(err))
	}
	switch req {
	case "setup", "ack", "restart":
		if qerr := s.q.Enqueue(m); qerr != nil {
			return plugin.Sync(errorReply(plugin.Errorf(ErrUnknown, "%v", qerr)))
		}
		return plugin.Async("")
	default:
		return plugin.Sync(s.p.apiRequest(s, m.Body, m.Transaction))
	}
}

// work runs setup and ack on the handle's worker.
func (s *session) work(m plugin.Message) {
	req, _, _ := plugin.DecodeRequest(m.Body, &codes) // HandleMessage decoded it already
	var err *plugin.RequestError
	var jsep *plugin.JSEP
	switch req {
	case "setup":
		jsep, err = s.offer()
	case "restart":
		jsep, err = s.restart()
	default:
		err = s.ack(m.JSEP)
	}
	if err != nil {
		if err.Code == ErrUnknown {
			s.h.Logger().Warn("textroom negotiation failed", "err", err.Reason)
		}
		_ = s.events.Push(s.h, m.Transaction, errorReply(err), nil)
		return
	}
	_ = s.events.Push(s.h, m.Transaction, map[string]any{"textroom": "event", "result": "ok"}, jsep)
}

// offer creates the PeerConnection with strata's data channel and offers it.
func (s *session) offer() (*plugin.JSEP, *plugin.RequestError) {
	s.mu.Lock()
	if s.setup {
		s.mu.Unlock()
		return nil, plugin.Errorf(ErrAlreadySetup, "PeerConnection already setup")
	}
	s.setup = true
	s.mu.Unlock()
	pr, err := s.h.Peer()
	if err != nil {
		return nil, plugin.Errorf(ErrUnknown, "PeerConnection: %v", err)
	}
	// As Janus, strata offers the data section without opening a channel: the client opens its
	// own ("JanusDataChannel" with janus.js) and each request is answered on the channel it came
	// on. A channel opened by strata too would reach janus.js as a second "JanusDataChannel" and
	// fire its ondataopen twice (Janus's demo then joins twice). Pion offers data only once a
	// channel was asked for: this one is asked for and closed before it can open.
	unopened, err := pr.PC.CreateDataChannel(label, nil)
	if err != nil {
		return nil, plugin.Errorf(ErrUnknown, "Data channel: %v", err)
	}
	_ = unopened.Close()
	s.mu.Lock()
	s.peer = pr
	s.mu.Unlock()
	pr.OnDataChannel(s.listen)
	return s.negotiate(pr)
}

// restart offers again with new ICE credentials (Janus's restart).
func (s *session) restart() (*plugin.JSEP, *plugin.RequestError) {
	s.mu.Lock()
	pr := s.peer
	s.mu.Unlock()
	if pr == nil {
		return nil, plugin.Errorf(ErrAlreadySetup, "PeerConnection not setup")
	}
	iceRestart := peer.BeforeLocal(func(pc *webrtc.PeerConnection) error {
		_, err := pc.CreateOffer(&webrtc.OfferOptions{ICERestart: true})
		return err
	})
	return s.negotiate(pr, iceRestart)
}

// negotiate creates strata's offer.
func (s *session) negotiate(pr *peer.Peer, opts ...peer.NegotiateOption) (*plugin.JSEP, *plugin.RequestError) {
	ctx, cancel := context.WithTimeout(s.q.Context(), negotiateTimeout)
	defer cancel()
	desc, err := pr.Offer(ctx, opts...)
	if err != nil {
		return nil, plugin.Errorf(ErrUnknown, "Offer: %v", err)
	}
	return &plugin.JSEP{Type: "offer", SDP: desc.SDP}, nil
}

// ack applies the client's answer.
func (s *session) ack(jsep *plugin.JSEP) *plugin.RequestError {
	if jsep == nil {
		return nil
	}
	s.mu.Lock()
	pr := s.peer
	s.mu.Unlock()
	if jsep.Type != "answer" || pr == nil {
		return plugin.Errorf(ErrUnknown, "Invalid response")
	}
	if err := pr.SetAnswer(webrtc.SessionDescription{Type: webrtc.SDPTypeAnswer, SDP: jsep.SDP}); err != nil {
		return plugin.Errorf(ErrUnknown, "Invalid response (%v)", err)
	}
	return nil
}

// listen handles the requests arriving on dc.
func (s *session) listen(dc *webrtc.DataChannel) {
	dc.OnMessage(func(msg webrtc.DataChannelMessage) {
		if !msg.IsString {
			return // Janus's textroom drops binary messages
		}
		s.mu.Lock()
		s.dc = dc
		s.mu.Unlock()
		if reply := s.request(msg.Data); reply != nil {
			_ = dc.SendText(string(encode(reply)))
		}
	})
}

// request answers one data channel request; nil: no reply (a message with ack false).
func (s *session) request(raw []byte) map[string]any {
	req, err := parseRequest(raw, s.p.cfg.MaxMessageSize)
	if err != nil {
		return errorReply(err)
	}
	reply, out := s.p.handle(s, req.name, req.body, false)
	out.send()
	if reply != nil {
		reply["transaction"] = req.transaction
	}
	return reply
}

// sendData sends msg on the session's current data channel, if it is open.
func (s *session) sendData(msg []byte) {
	s.mu.Lock()
	dc := s.dc
	s.mu.Unlock()
	if dc != nil && dc.ReadyState() == webrtc.DataChannelStateOpen {
		_ = dc.SendText(string(msg))
	}
}

// leaveAll takes the session out of every room, as Janus does when the PeerConnection goes.
func (s *session) leaveAll() {
	var out outbox
	s.p.mu.Lock()
	for id, pt := range s.rooms {
		if rm := s.p.rooms[id]; rm != nil {
			out.leave(rm, pt)
		}
	}
	s.p.mu.Unlock()
	out.send()
}

// MediaReady needs nothing: requests are answered as soon as the data channel carries them.
func (s *session) MediaReady() {}

// MediaClosed leaves every room and allows a new setup.
func (s *session) MediaClosed(string) {
	s.leaveAll()
	s.mu.Lock()
	s.setup, s.peer, s.dc = false, nil, nil
	s.mu.Unlock()
}

// Detach leaves every room and stops the worker.
func (s *session) Detach() {
	if s.events.Detach() {
		return // Destroy and the gateway may both detach
	}
	s.q.Close()
	s.leaveAll()
	s.p.sessions.Remove(s)
}

// Query is the handle's plugin_specific part of handle_info: the rooms it is in.
func (s *session) Query() any {
	s.p.mu.Lock()
	defer s.p.mu.Unlock()
	rooms := map[string]string{}
	for id, pt := range s.rooms {
		rooms[id] = pt.username
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return map[string]any{"setup": s.setup, "rooms": rooms}
}

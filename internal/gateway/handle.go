package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/strata-rtc/strata/internal/janus"
	"github.com/strata-rtc/strata/internal/pcap"
	"github.com/strata-rtc/strata/internal/peer"
	"github.com/strata-rtc/strata/internal/plugin"
)

var (
	errHandleGone = errors.New("gateway: handle detached")
	errNoMedia    = errors.New("gateway: no PeerConnection factory configured")
)

// handle is one attached handle; it implements plugin.Handle for its plugin.
type handle struct {
	id       uint64
	sess     *session
	gw       *Gateway
	plug     plugin.Plugin
	opaqueID string
	created  time.Time
	log      *slog.Logger
	ctx      context.Context // cancelled once the plugin session is detached
	cancel   context.CancelFunc
	work     worker

	// ps is set once right after a successful Attach, before the handle is visible to requests.
	ps plugin.Session

	// peerMu serialises PeerConnection creation; mu guards the fields below (and is never held
	// while calling into the peer or the plugin, whose callbacks take it).
	peerMu sync.Mutex
	mu     sync.Mutex
	slot   *peerSlot // current PeerConnection, nil if none
	flags  handleFlags
	// awaitingAnswer: the plugin sent an offer to the client, so an answer is acceptable.
	awaitingAnswer bool
	closing        bool // detach started: no new messages are accepted
	finished       bool // the plugin detached: no more plugin calls or events

	// capture is start_pcap's file, given to every PeerConnection of the handle (pcap.go).
	capture *pcap.Capture
}

// peerSlot identifies one PeerConnection, so that callbacks from a peer that was replaced are
// recognised and ignored.
type peerSlot struct{ p *peer.Peer }

// handleFlags are what handle_info reports under "flags".
type handleFlags struct {
	GotOffer    bool `json:"got-offer"`
	GotAnswer   bool `json:"got-answer"`
	SentOffer   bool `json:"sent-offer"`
	SentAnswer  bool `json:"sent-answer"`
	Negotiated  bool `json:"negotiated"`
	Ready       bool `json:"ready"`
	Stopped     bool `json:"stopped"`
	Trickle     bool `json:"trickle"`
	AllTrickles bool `json:"all-trickles"`
	E2EE        bool `json:"e2ee"`
}

func newHandle(g *Gateway, s *session, id uint64, p plugin.Plugin, opaqueID string) *handle {
	h := &handle{id: id, sess: s, gw: g, plug: p, opaqueID: opaqueID, created: time.Now()}
	h.log = g.log.With("session", s.id, "handle", id, "plugin", p.Package())
	h.work.log = h.log
	h.ctx, h.cancel = context.WithCancel(g.ctx)
	return h
}

// ID implements plugin.Handle.
func (h *handle) ID() uint64 { return h.id }

// SessionID implements plugin.Handle.
func (h *handle) SessionID() uint64 { return h.sess.id }

// OpaqueID implements plugin.Handle.
func (h *handle) OpaqueID() string { return h.opaqueID }

// Logger implements plugin.Handle.
func (h *handle) Logger() *slog.Logger { return h.log }

// PushEvent implements plugin.Handle. The data is marshalled at once, so the plugin may reuse it.
// An offer in jsep is remembered: it is what makes a later answer from the client acceptable.
func (h *handle) PushEvent(tx string, data any, jsep *plugin.JSEP) error {
	raw, err := json.Marshal(data)
	if err != nil {
		return err
	}
	h.mu.Lock()
	if h.finished {
		h.mu.Unlock()
		return errHandleGone
	}
	var j *plugin.JSEP
	if jsep != nil {
		c := *jsep
		j = &c
		h.noteLocalJSEP(c.Type)
	}
	h.mu.Unlock()
	// Event handlers hear of it first, so that what a client does next comes after it there too.
	if j != nil {
		h.emitJSEP("local", j)
	}
	h.emitPlugin(raw)
	h.sess.deliver(janus.Message{
		Janus: "event", SessionID: h.sess.id, Transaction: tx, Sender: h.id,
		PluginData: &janus.PluginData{Plugin: h.plug.Package(), Data: json.RawMessage(raw)},
		JSEP:       j,
	})
	return nil
}

// noteLocalJSEP records a description the plugin sends. Called with h.mu held.
func (h *handle) noteLocalJSEP(typ string) {
	switch typ {
	case "offer":
		h.awaitingAnswer = true
		h.flags.SentOffer = true
	case "answer":
		h.flags.SentAnswer = true
		h.flags.Negotiated = true
	}
}

// Peer implements plugin.Handle: the PeerConnection is created on first use.
func (h *handle) Peer(opts ...peer.PeerOption) (*peer.Peer, error) {
	h.peerMu.Lock()
	defer h.peerMu.Unlock()
	h.mu.Lock()
	if h.closing {
		h.mu.Unlock()
		return nil, errHandleGone
	}
	if h.slot != nil {
		p := h.slot.p
		h.mu.Unlock()
		return p, nil
	}
	if h.gw.peers == nil {
		h.mu.Unlock()
		return nil, errNoMedia
	}
	slot := &peerSlot{}
	h.slot = slot
	h.mu.Unlock()

	if po, ok := h.plug.(plugin.PeerOptioner); ok {
		opts = append(po.PeerOptions(), opts...)
	}
	p, err := h.gw.peers.New(h.hooks(slot), opts...)
	h.mu.Lock()
	if err != nil || h.closing || h.slot != slot {
		if h.slot == slot {
			h.slot = nil
		}
		h.mu.Unlock()
		if err == nil {
			p.Close("Handle detached")
			err = errHandleGone
		}
		return nil, err
	}
	slot.p = p
	h.flags.Stopped = false
	if h.capture != nil {
		p.SetCapture(h.capture)
	}
	h.mu.Unlock()
	return p, nil
}

// currentPeer returns the PeerConnection if there is one, without creating it.
func (h *handle) currentPeer() *peer.Peer {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.slot == nil {
		return nil
	}
	return h.slot.p
}

// ClosePeer implements plugin.Handle. The `hangup` event and MediaClosed follow from the peer's
// OnHangup hook.
func (h *handle) ClosePeer(reason string) {
	if p := h.currentPeer(); p != nil {
		p.Close(reason)
	}
}

func (h *handle) isFinished() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.finished
}

// pluginCall queues a call into the plugin session behind any pending messages; it is dropped if
// the plugin has detached by the time it runs.
func (h *handle) pluginCall(f func(plugin.Session)) {
	h.work.add(func() {
		if h.isFinished() {
			return
		}
		f(h.ps)
	})
}

// enqueueMessage queues a message for the plugin; reply is called with the plugin's answer once it
// has been handled. Messages to one handle reach the plugin one at a time, in order.
func (h *handle) enqueueMessage(m plugin.Message, reply func(janus.Message)) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closing {
		reply(janus.ErrorReply(h.sess.id, m.Transaction, errNoHandle(h.sess.id, h.id)))
		return
	}
	h.work.add(func() {
		if h.isFinished() {
			reply(janus.ErrorReply(h.sess.id, m.Transaction, errNoHandle(h.sess.id, h.id)))
			return
		}
		var res plugin.Result
		if err := guard(func() { res = h.ps.HandleMessage(h.ctx, m) }); err != nil {
			h.log.Error("plugin HandleMessage failed", "err", err)
			res = plugin.Result{CoreError: int(janus.ErrPluginMessage), CoreReason: err.Error()}
		}
		reply(h.resultReply(m.Transaction, res))
	})
}

// resultReply turns a plugin's Result into the Janus reply.
func (h *handle) resultReply(tx string, res plugin.Result) janus.Message {
	sid := h.sess.id
	if res.CoreError != 0 {
		code := janus.Code(res.CoreError)
		reason := res.CoreReason
		if reason == "" {
			reason = code.String()
		}
		return janus.ErrorReply(sid, tx, &janus.Error{Code: code, Reason: reason})
	}
	if res.Async {
		return janus.Message{Janus: "ack", SessionID: sid, Transaction: tx, Hint: res.Hint}
	}
	if res.Data == nil {
		return janus.ErrorReply(sid, tx, janus.Errorf(janus.ErrPluginMessage,
			"Plugin didn't provide any content for this synchronous response"))
	}
	raw, err := json.Marshal(res.Data)
	if err != nil {
		return janus.ErrorReply(sid, tx, janus.Errorf(janus.ErrPluginMessage, "Plugin reply cannot be encoded: %v", err))
	}
	return janus.Message{Janus: "success", SessionID: sid, Transaction: tx, Sender: h.id,
		PluginData: &janus.PluginData{Plugin: h.plug.Package(), Data: json.RawMessage(raw)}}
}

// detach ends the handle: it stops accepting messages, and once the messages already queued have
// been handled it closes the PeerConnection and calls the plugin's Detach. Then after (if any) runs,
// and with notify a `detached` event follows. Calling it again only queues after behind the first.
func (h *handle) detach(reason string, notify bool, after func()) {
	h.mu.Lock()
	defer h.mu.Unlock()
	first := !h.closing
	h.closing = true
	if first {
		h.gw.mu.Lock()
		delete(h.gw.handles, h.id)
		h.gw.mu.Unlock()
		h.sess.removeHandle(h.id)
	}
	h.work.add(func() {
		if first {
			h.finish(reason)
			h.emitHandle("detached")
		}
		if after != nil {
			after()
		}
		if first && notify {
			h.sess.deliver(janus.Message{Janus: "detached", SessionID: h.sess.id, Sender: h.id})
		}
	})
}

// finish runs on the worker: hang up, detach the plugin, stop everything.
func (h *handle) finish(reason string) {
	h.mu.Lock()
	slot := h.slot
	h.slot = nil
	h.mu.Unlock()
	if slot != nil && slot.p != nil {
		slot.p.Close(reason)
	}
	h.stopCapture()
	if err := guard(h.ps.Detach); err != nil {
		h.log.Error("plugin Detach failed", "err", err)
	}
	h.mu.Lock()
	h.finished = true
	h.mu.Unlock()
	h.cancel()
}

func errNoHandle(sid, hid uint64) *janus.Error {
	return janus.Errorf(janus.ErrHandleNotFound, "No such handle %d in session %d", hid, sid)
}

func errNoSession(sid uint64) *janus.Error {
	return janus.Errorf(janus.ErrSessionNotFound, "No such session %d", sid)
}

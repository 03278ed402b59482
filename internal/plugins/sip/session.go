package sip

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"time"

	"github.com/strata-rtc/strata/internal/plugin"
	"github.com/strata-rtc/strata/internal/record"
	"github.com/strata-rtc/strata/internal/rtpbridge"
)

// regState is a handle's registration status, named as Janus names it in handle_info.
type regState int

const (
	regUnregistered regState = iota
	regRegistering
	regRegistered
	regFailed
	regUnregistering
	regDisabled // a guest or helper: no REGISTER sent
)

func (r regState) String() string {
	return [...]string{"unregistered", "registering", "registered", "registration_failed", "unregistering", "disabled"}[r]
}

// callState is a handle's call status (Janus: janus_sip_call_status).
type callState int

const (
	callIdle callState = iota
	callCalling
	callInvited
	callInCall
	callClosing
)

func (c callState) String() string {
	return [...]string{"idle", "calling", "invited", "incall", "closing"}[c]
}

// session is the SIP state of one handle: its account and SIP stack, and at most one call (as in
// Janus: a second incoming call is answered 486 Busy Here and reported as missed_call).
type session struct {
	p   *Plugin
	h   plugin.Handle
	log *slog.Logger
	q   *plugin.Queue

	events plugin.Pusher

	mu       sync.Mutex // guards what follows
	st       *stack
	acct     account
	reg      regState
	regTimer *time.Timer
	keepTick *time.Ticker
	masterID uint64   // this account's id for helpers (0: none yet)
	master   *session // a helper's master
	call     *call
	rec      []*record.Participant
	detached bool
}

func newSession(p *Plugin, h plugin.Handle) *session {
	log := h.Logger()
	if log == nil {
		log = p.log
	}
	s := &session{p: p, h: h, log: log.With("plugin", short)}
	s.q = plugin.NewQueue(queueSize, s.process)
	return s
}

// HandleMessage queues the request: every SIP request is asynchronous in Janus.
func (s *session) HandleMessage(_ context.Context, m plugin.Message) plugin.Result {
	if err := s.q.Enqueue(m); err != nil {
		return plugin.Sync(plugin.Error(short, ErrUnknown, err.Error()))
	}
	return plugin.Async("")
}

// requestTimeout bounds one request's SIP transactions (REGISTER with its challenge, a re-INVITE).
const requestTimeout = 40 * time.Second

// process runs one request on the handle's queue and pushes its result or error.
func (s *session) process(m plugin.Message) {
	name, b, rerr := decodeRequest(m.Body)
	if rerr == nil {
		ctx, cancel := context.WithTimeout(s.q.Context(), requestTimeout)
		rerr = s.dispatch(ctx, name, b, m)
		cancel()
	}
	if rerr != nil {
		s.log.Debug("request failed", "request", name, "code", rerr.Code, "err", rerr.Reason)
		s.push(m.Transaction, rerr.Data(short), nil)
	}
}

// req is one request being handled: its transaction, body and JSEP.
type req struct {
	tx   string
	b    plugin.Body
	raw  json.RawMessage
	jsep *plugin.JSEP
}

func (s *session) dispatch(ctx context.Context, name string, b plugin.Body, m plugin.Message) *plugin.RequestError {
	r := req{tx: m.Transaction, b: b, raw: m.Body, jsep: m.JSEP}
	switch name {
	case "register":
		return s.register(ctx, r)
	case "unregister":
		return s.unregister(ctx, r)
	case "call":
		return s.startCall(ctx, r)
	case "accept", "progress":
		return s.accept(ctx, r, name == "progress")
	case "decline":
		return s.decline(r)
	case "hangup":
		return s.hangup(ctx, r)
	case "hold", "unhold":
		return s.hold(ctx, r, name == "hold")
	case "update":
		return s.update(ctx, r)
	case "message":
		return s.sendMessage(ctx, r)
	case "info", "dtmf_info":
		return s.sendInfo(ctx, r, name == "dtmf_info")
	case "transfer":
		return s.transfer(ctx, r)
	case "recording":
		return s.recording(r)
	case "keyframe":
		return s.keyframe(r)
	}
	return plugin.Errorf(ErrInvalidRequest, "Unknown request (%s)", name)
}

// event pushes {"sip":"event","result":result} (with "call_id" when not empty). A request's own
// result carries its transaction; what the SIP side causes later (ringing, accepted, hangup,
// registered after registering...) carries none: Janus repeats the last request's there, which
// janus.js ignores, and a client that waits for a transaction's event could take the later one
// for the answer.
func (s *session) event(tx, callID string, result map[string]any, jsep *plugin.JSEP) {
	data := map[string]any{short: "event", "result": result}
	if callID != "" {
		data["call_id"] = callID
	}
	s.push(tx, data, jsep)
}

func (s *session) push(tx string, data any, jsep *plugin.JSEP) {
	if err := s.events.Push(s.h, tx, data, jsep); err != nil {
		s.log.Debug("pushing event", "err", err)
	}
}

// MediaReady: the media bridge starts with the PeerConnection itself.
func (s *session) MediaReady() {}

// MediaClosed: the browser's PeerConnection went away; as in Janus, the call ends with it (BYE,
// or CANCEL while it rings).
func (s *session) MediaClosed(reason string) {
	s.log.Debug("PeerConnection closed", "reason", reason)
	go s.endCall("PeerConnection closed")
}

// Detach ends the call (BYE) and the registration (REGISTER with Expires 0) in the background and
// closes the SIP stack then; nothing touches the handle after Detach returns.
func (s *session) Detach() {
	s.q.Close()
	s.events.Detach()
	s.mu.Lock()
	s.detached = true
	st, registered := s.st, s.reg == regRegistered
	s.stopTimersLocked()
	s.mu.Unlock()
	s.p.forget(s)
	go func() {
		s.endCall("Detached")
		if registered {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			_ = s.sendRegister(ctx, 0)
			cancel()
		}
		st.close()
	}()
}

// Query is handle_info's plugin_specific part, as Janus's SIP plugin fills it.
func (s *session) Query() any {
	s.mu.Lock()
	defer s.mu.Unlock()
	q := map[string]any{"registration_status": s.reg.String(), "call_status": callIdle.String()}
	if s.acct.username != "" {
		q["username"] = s.acct.username
		q["display_name"] = s.acct.display
		q["identity"] = s.acct.identity
	}
	if s.st != nil {
		q["sip_port"] = s.st.port
	}
	if s.masterID != 0 {
		q["master_id"] = s.masterID
	}
	if s.master != nil {
		q["helper"] = true
	}
	if c := s.call; c != nil {
		q["call_status"] = c.state.String()
		q["call_id"] = c.id
		q["callee"] = c.peerURI
		if c.bridge != nil {
			q["media"] = mediaInfo(c.bridge.Stats())
		}
	}
	return q
}

// mediaInfo reports the bridge's counters, per medium and direction.
func mediaInfo(st rtpbridge.Stats) map[string]any {
	medium := func(m rtpbridge.MediumStats) map[string]any {
		flow := func(f rtpbridge.FlowStats) map[string]any {
			return map[string]any{"packets": f.Packets, "bytes": f.Bytes, "lost": f.Lost, "jitter": f.Jitter}
		}
		return map[string]any{"codec": m.Codec, "to_sip": flow(m.ToPlain), "from_sip": flow(m.FromPlain)}
	}
	return map[string]any{"audio": medium(st.Audio), "video": medium(st.Video), "peer": st.Peer, "srtp": st.SRTP}
}

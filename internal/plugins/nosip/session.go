package nosip

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/internal/peer"
	"github.com/strata-rtc/strata/internal/plugin"
	"github.com/strata-rtc/strata/internal/rtpbridge"
)

// negotiateTimeout bounds one generate or process (half-trickle waits for ICE gathering).
const negotiateTimeout = 30 * time.Second

// session is the NoSIP state of one handle: its bridge, created by the first generate or process
// of a call and closed with the PeerConnection.
type session struct {
	plugin *Plugin
	h      plugin.Handle
	log    *slog.Logger
	q      *plugin.Queue
	events plugin.Pusher

	mu     sync.Mutex // guards what follows
	bridge *rtpbridge.Session
	peer   *peer.Peer
	srtp   rtpbridge.SRTPMode // of the call, as the first request set it
	rec    recordings
}

func newSession(p *Plugin, h plugin.Handle) *session {
	log := h.Logger()
	if log == nil {
		log = p.log
	}
	s := &session{plugin: p, h: h, log: log.With("plugin", short)}
	s.q = plugin.NewQueue(queueSize, s.handle)
	return s
}

// HandleMessage queues the request; its result follows as an event (all of NoSIP's are async).
func (s *session) HandleMessage(_ context.Context, m plugin.Message) plugin.Result {
	if err := s.q.Enqueue(m); err != nil {
		return plugin.Sync(plugin.Error(short, ErrUnknown, err.Error()))
	}
	return plugin.Async("")
}

// MediaReady: the bridge already relays.
func (s *session) MediaReady() {}

// MediaClosed ends the call: the bridge and the recordings go, as in Janus (no event).
func (s *session) MediaClosed(reason string) {
	s.log.Debug("PeerConnection closed", "reason", reason)
	s.endCall()
}

// Detach stops the session; afterwards nothing touches the handle.
func (s *session) Detach() {
	s.q.Close()
	s.events.Detach()
	s.endCall()
	s.plugin.sessions.Remove(s)
}

func (s *session) endCall() {
	s.stopRecording(true, true, true, true)
	s.mu.Lock()
	b := s.bridge
	s.bridge, s.peer, s.srtp = nil, nil, rtpbridge.SRTPOff
	s.mu.Unlock()
	if b != nil {
		_ = b.Close()
	}
}

func (s *session) push(tx string, data any, jsep *plugin.JSEP) {
	if err := s.events.Push(s.h, tx, data, jsep); err != nil {
		s.log.Debug("pushing event", "err", err)
	}
}

// handle runs one request on the session's queue.
func (s *session) handle(m plugin.Message) {
	result, jsep, rerr := s.dispatch(m)
	if rerr != nil {
		s.push(m.Transaction, rerr.Data(short), nil)
		return
	}
	s.push(m.Transaction, map[string]any{short: "event", "result": result}, jsep)
}

func (s *session) dispatch(m plugin.Message) (map[string]any, *plugin.JSEP, *plugin.RequestError) {
	name, body, rerr := plugin.DecodeRequest(m.Body, codes)
	if rerr != nil {
		return nil, nil, rerr
	}
	switch name {
	case "generate":
		r, err := s.generate(body, m.JSEP)
		return r, nil, err
	case "process":
		return s.process(body)
	case "hangup":
		s.h.ClosePeer("NoSIP hangup")
		return map[string]any{"event": "hangingup"}, nil, nil
	case "recording":
		return s.recording(body)
	case "keyframe":
		return s.keyframe(body)
	}
	return nil, nil, plugin.Errorf(ErrInvalidRequest, "Unknown request (%s)", body.Str("request"))
}

var (
	generateParams = []plugin.Param{{Name: "info", Kind: plugin.String}, {Name: "srtp", Kind: plugin.String},
		{Name: "srtp_profile", Kind: plugin.String}, {Name: "update", Kind: plugin.Bool}}
	processParams = append([]plugin.Param{{Name: "type", Kind: plugin.String, Required: true},
		{Name: "sdp", Kind: plugin.String, Required: true}}, generateParams...)
)

// generate turns the browser's JSEP into a plain SDP.
func (s *session) generate(body plugin.Body, jsep *plugin.JSEP) (map[string]any, *plugin.RequestError) {
	if err := body.Validate(generateParams...); err != nil {
		return nil, err
	}
	if jsep == nil || jsep.SDP == "" {
		return nil, plugin.Errorf(ErrMissingSDP, "Missing SDP")
	}
	if err := checkSDP(jsep.Type, jsep.SDP, jsep.E2EE); err != nil {
		return nil, err
	}
	b, mode, err := s.bridgeFor(body)
	if err != nil {
		return nil, err
	}
	if jsep.Type == "answer" && mode == rtpbridge.SRTPMandatory && !b.Stats().SRTP {
		return nil, plugin.Errorf(ErrTooStrict, "Can't generate answer: SDES-SRTP required, but caller didn't offer it")
	}
	ctx, cancel := context.WithTimeout(context.Background(), negotiateTimeout)
	defer cancel()
	sdp, gerr := b.FromWebRTC(ctx, webrtc.SessionDescription{Type: webrtc.NewSDPType(jsep.Type), SDP: jsep.SDP})
	if gerr != nil {
		return nil, bridgeError(gerr)
	}
	res := map[string]any{"event": "generated", "type": jsep.Type, "sdp": sdp}
	if body.Bool("update") {
		res["update"] = true
	}
	return res, nil
}

// process turns the plain peer's SDP into a JSEP for the browser.
func (s *session) process(body plugin.Body) (map[string]any, *plugin.JSEP, *plugin.RequestError) {
	if err := body.Validate(processParams...); err != nil {
		return nil, nil, err
	}
	typ := strings.ToLower(body.Str("type"))
	if err := checkSDP(typ, body.Str("sdp"), false); err != nil {
		return nil, nil, err
	}
	b, mode, rerr := s.bridgeFor(body)
	if rerr != nil {
		return nil, nil, rerr
	}
	ctx, cancel := context.WithTimeout(context.Background(), negotiateTimeout)
	defer cancel()
	jsep, err := b.FromPlain(ctx, body.Str("sdp"), webrtc.NewSDPType(typ))
	if err != nil {
		return nil, nil, bridgeError(err)
	}
	res := map[string]any{"event": "processed"}
	if b.Stats().SRTP {
		res["srtp"] = map[bool]string{true: "sdes_mandatory", false: "sdes_optional"}[mode == rtpbridge.SRTPMandatory]
	}
	if body.Bool("update") {
		res["update"] = true
	}
	if jsep == nil {
		return res, nil, nil
	}
	return res, &plugin.JSEP{Type: jsep.Type.String(), SDP: jsep.SDP}, nil
}

// checkSDP is Janus's check of a description before it is parsed.
func checkSDP(typ, sdp string, e2ee bool) *plugin.RequestError {
	if typ != "offer" && typ != "answer" {
		return plugin.Errorf(ErrMissingSDP, "Missing or invalid SDP type")
	}
	if strings.Contains(sdp, "m=application") {
		return plugin.Errorf(ErrMissingSDP, "The NoSIP plugin does not support DataChannels")
	}
	if e2ee {
		return plugin.Errorf(ErrInvalidElement, "Media encryption unsupported by this plugin")
	}
	return nil
}

// bridgeFor returns the call's bridge, creating it (on the handle's PeerConnection) with the
// request's SRTP choice when the call starts.
func (s *session) bridgeFor(body plugin.Body) (*rtpbridge.Session, rtpbridge.SRTPMode, *plugin.RequestError) {
	mode, err := rtpbridge.ParseSRTPMode(strings.ToLower(body.Str("srtp")))
	if err != nil {
		return nil, 0, plugin.Errorf(ErrInvalidElement, "Invalid element (srtp can only be sdes_optional or sdes_mandatory)")
	}
	profile := body.Str("srtp_profile")
	if profile != "" && profile != rtpbridge.ProfileAES80 && profile != rtpbridge.ProfileAES32 {
		return nil, 0, plugin.Errorf(ErrInvalidElement, "Invalid element (unsupported SRTP profile)")
	}
	p, perr := s.h.Peer()
	if perr != nil {
		return nil, 0, plugin.Errorf(ErrUnknown, "No PeerConnection: %v", perr)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.bridge != nil && s.peer == p {
		s.srtp = mode // Janus takes the policy from each request
		if err := s.bridge.SetSRTP(mode, profile); err != nil {
			return nil, 0, plugin.Errorf(ErrInvalidElement, "%v", err)
		}
		return s.bridge, mode, nil
	}
	if s.bridge != nil {
		_ = s.bridge.Close()
	}
	b, berr := rtpbridge.New(s.plugin.bridge, p, rtpbridge.Options{SRTP: mode, SRTPProfile: profile, StreamID: "janus", Log: s.log})
	if berr != nil {
		return nil, 0, plugin.Errorf(ErrIOError, "%v", berr)
	}
	s.bridge, s.peer, s.srtp = b, p, mode
	return b, mode, nil
}

// bridgeError maps the bridge's errors onto Janus's NoSIP codes.
func bridgeError(err error) *plugin.RequestError {
	switch {
	case errors.Is(err, rtpbridge.ErrMalformedSDP):
		return plugin.Errorf(ErrMissingSDP, "Error parsing SDP: %v", err)
	case errors.Is(err, rtpbridge.ErrNoCodec):
		return plugin.Errorf(ErrInvalidSDP, "%v", err)
	case errors.Is(err, rtpbridge.ErrBadCrypto):
		return plugin.Errorf(ErrTooStrict, "%v", err)
	case errors.Is(err, rtpbridge.ErrState):
		return plugin.Errorf(ErrWrongState, "%v", err)
	case errors.Is(err, rtpbridge.ErrNoPorts):
		return plugin.Errorf(ErrIOError, "Could not allocate RTP/RTCP ports")
	}
	return plugin.Errorf(ErrUnknown, "%v", err)
}

// keyframe asks the browser ("user") and/or the plain peer ("peer") for a keyframe, both when
// the request names neither (as Janus's SIP plugin's keyframe request).
func (s *session) keyframe(body plugin.Body) (map[string]any, *plugin.JSEP, *plugin.RequestError) {
	if err := body.Validate(plugin.Param{Name: "user", Kind: plugin.Bool}, plugin.Param{Name: "peer", Kind: plugin.Bool}); err != nil {
		return nil, nil, err
	}
	s.mu.Lock()
	b := s.bridge
	s.mu.Unlock()
	if b == nil {
		return nil, nil, plugin.Errorf(ErrWrongState, "Wrong state (no call)")
	}
	user, peer := body.Bool("user"), body.Bool("peer")
	if !body.Has("user") && !body.Has("peer") {
		user, peer = true, true
	}
	b.RequestKeyframeFrom(user, peer)
	return map[string]any{"event": "keyframesent"}, nil, nil
}

// Query is handle_info's plugin_specific, with Janus's fields and the bridge's statistics.
func (s *session) Query() any {
	s.mu.Lock()
	b, mode, files := s.bridge, s.srtp, s.rec.names()
	s.mu.Unlock()
	q := map[string]any{"srtp-required": yesNo(mode == rtpbridge.SRTPMandatory), "hangingup": 0, "destroyed": 0}
	if len(files) > 0 {
		q["recording"] = files
	}
	if b != nil {
		st := b.Stats()
		q["sdes-local"] = yesNo(st.SRTP || mode != rtpbridge.SRTPOff)
		q["sdes-remote"] = yesNo(st.SRTP)
		q["media"] = st
	}
	return q
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

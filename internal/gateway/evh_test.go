package gateway

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/config"
	"github.com/strata-rtc/strata/internal/events"
	"github.com/strata-rtc/strata/internal/gateway/gatewaytest"
	"github.com/strata-rtc/strata/internal/janus"
)

// evRecorder is an event handler that keeps the events it is offered, decoded.
type evRecorder struct {
	mu  sync.Mutex
	got []map[string]any
}

func (r *evRecorder) Name() string        { return "rec" }
func (r *evRecorder) Mask() events.Mask   { return events.MaskAll }
func (r *evRecorder) Stats() events.Stats { return events.Stats{} }
func (r *evRecorder) Close(time.Duration) {}
func (r *evRecorder) Query(req json.RawMessage) any {
	return map[string]any{"echo": req}
}
func (r *evRecorder) Offer(ev []byte) bool {
	var m map[string]any
	if err := json.Unmarshal(ev, &m); err != nil {
		panic(err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, m)
	return true
}

func (r *evRecorder) events() []map[string]any {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]map[string]any(nil), r.got...)
}

// summary is "type/subtype name-or-what" for each event, ids checked by the caller.
func summary(ev map[string]any) string {
	body, _ := ev["event"].(map[string]any)
	s := jsonNum(ev["type"])
	if st := jsonNum(ev["subtype"]); st != "" {
		s += "/" + st
	}
	for _, k := range []string{"name", "owner", "status", "connection"} {
		if v, ok := body[k].(string); ok {
			s += " " + v
		}
	}
	if j, ok := body["jsep"].(map[string]any); ok {
		s += " " + j["type"].(string)
	}
	return s
}

func jsonNum(v any) string {
	if f, ok := v.(float64); ok {
		return fmt.Sprint(int64(f))
	}
	return ""
}

func newEvhEnv(t *testing.T, mutate func(*config.Config), opts ...Option) (*testEnv, *evRecorder) {
	rec := &evRecorder{}
	bus := events.NewBus("strata-test", []events.Handler{rec}, quietLogger())
	e := newEnv(t, mutate, append(opts, WithEvents(bus))...)
	return e, rec
}

// TestEventHandlersSeeALifecycle: create, attach, an offer from the plugin, the client's answer,
// detach and destroy give the session, handle, jsep and plugin events in order, with the ids.
func TestEventHandlersSeeALifecycle(t *testing.T) {
	e, rec := newEvhEnv(t, nil)
	sid := e.create()
	hid := e.attach(sid)
	if m := e.do(`{"janus":"message","transaction":"o","session_id":{S},"handle_id":{H},"body":{"request":"offer"}}`, sid, hid); m.Janus != "ack" {
		t.Fatalf("offer request: %s", janus.Encode(m))
	}
	if _, ok := e.sink.WaitFor("event", 5*time.Second); !ok {
		t.Fatal("no offer event")
	}
	answer := `"jsep":{"type":"answer","sdp":"` + strings.ReplaceAll(gatewaytest.OfferSDP, "\r\n", `\r\n`) + `"}`
	if m := e.do(`{"janus":"message","transaction":"a","session_id":{S},"handle_id":{H},"body":{},`+answer+`}`, sid, hid); m.Janus != "ack" {
		t.Fatalf("answer: %s", janus.Encode(m))
	}
	if _, ok := e.sink.WaitFor("event", 5*time.Second); !ok {
		t.Fatal("no event after the answer")
	}
	e.do(`{"janus":"detach","transaction":"d","session_id":{S},"handle_id":{H}}`, sid, hid)
	e.do(`{"janus":"destroy","transaction":"x","session_id":{S}}`, sid, 0)
	e.g.Close()

	want := []string{"256/1 started", "1 created", "2 attached", "8 local offer", "64", "8 remote answer", "64",
		"2 detached", "1 destroyed", "256/2 shutdown"}
	eventually(t, "every event", func() bool { return len(rec.events()) >= len(want) })
	evs := rec.events()
	var got []string
	for _, ev := range evs {
		got = append(got, summary(ev))
	}
	if strings.Join(got, ", ") != strings.Join(want, ", ") {
		t.Fatalf("events\n got %v\nwant %v", got, want)
	}
	for i, ev := range evs {
		if ev["emitter"] != "strata-test" || ev["timestamp"].(float64) <= 0 {
			t.Errorf("event %d: %v", i, ev)
		}
		typ := ev["type"].(float64)
		if typ == 256 {
			if _, has := ev["session_id"]; has {
				t.Errorf("core event with a session: %v", ev)
			}
			continue
		}
		if uint64(ev["session_id"].(float64)) != sid {
			t.Errorf("event %d session %v, want %d", i, ev["session_id"], sid)
		}
		if typ != 1 && (uint64(ev["handle_id"].(float64)) != hid || ev["opaque_id"] != "op-1") {
			t.Errorf("event %d handle %v opaque %v, want %d op-1", i, ev["handle_id"], ev["opaque_id"], hid)
		}
	}
	body := func(i int) map[string]any { return evs[i]["event"].(map[string]any) }
	if body(2)["plugin"] != gatewaytest.EchoPackage || body(3)["jsep"].(map[string]any)["sdp"] != gatewaytest.OfferSDP {
		t.Errorf("attached %v, local jsep %v", body(2), body(3))
	}
	if d := body(4)["data"].(map[string]any); body(4)["plugin"] != gatewaytest.EchoPackage || d["result"] != "offer" {
		t.Errorf("plugin event %v", body(4))
	}
	if tr := body(1)["transport"].(map[string]any); tr["transport"] != e.sink.Transport() || tr["id"] == "" || tr["id"] == "0" {
		t.Errorf("created: transport %v", tr)
	}
}

// TestEventHandlersSeeATimeout: a session that times out gives "timeout", not "destroyed"; without
// jsep_sdp the jsep events carry no SDP.
func TestEventHandlersSeeATimeout(t *testing.T) {
	e, rec := newEvhEnv(t, func(c *config.Config) { c.General.SessionTimeout = 200 * time.Millisecond },
		WithWatchdogInterval(20*time.Millisecond))
	sid := e.create()
	eventually(t, "the timeout", func() bool { return !e.g.HasSession(sid) })
	evs := rec.events()
	if len(evs) != 3 || summary(evs[1]) != "1 created" || summary(evs[2]) != "1 timeout" {
		var got []string
		for _, ev := range evs {
			got = append(got, summary(ev))
		}
		t.Fatalf("events %v", got)
	}
}

// TestQueryEventHandler: query_eventhandler's errors and answer, custom_event, and server_info.
func TestQueryEventHandler(t *testing.T) {
	e, rec := newEvhEnv(t, nil)
	const pre = `{"janus":"query_eventhandler","transaction":"q","admin_secret":"janusoverlord"`
	for _, c := range []struct {
		body string
		code janus.Code
	}{
		{`}`, janus.ErrMissingMandatoryElement},
		{`,"handler":7}`, janus.ErrInvalidElementType},
		{`,"handler":"rec","request":"tweak"}`, janus.ErrInvalidElementType},
		{`,"handler":"janus.eventhandler.nope","request":{}}`, janus.ErrPluginNotFound},
	} {
		wantCode(t, e.admin(pre+c.body, 0, 0), c.code)
	}
	if m := e.admin(`{"janus":"query_eventhandler","transaction":"q","handler":"rec"}`, 0, 0); m.Error == nil || m.Error.Code != janus.ErrUnauthorized {
		t.Errorf("without the secret: %s", janus.Encode(m))
	}
	m := e.admin(pre+`,"handler":"rec","request":{"request":"stats"}}`, 0, 0)
	if got := string(janus.Encode(m)); !strings.Contains(got, `"response":{"echo":{"request":"stats"}}`) || m.Janus != "success" {
		t.Errorf("reply %s", got)
	}
	for body, code := range map[string]janus.Code{
		`}`:                         janus.ErrMissingMandatoryElement,
		`,"schema":1,"data":{}}`:    janus.ErrInvalidElementType,
		`,"schema":"s"}`:            janus.ErrMissingMandatoryElement,
		`,"schema":"s","data":[1]}`: janus.ErrInvalidElementType,
	} {
		wantCode(t, e.admin(strings.Replace(pre, "query_eventhandler", "custom_event", 1)+body, 0, 0), code)
	}
	if m := e.admin(strings.Replace(pre, "query_eventhandler", "custom_event", 1)+`,"schema":"my.source","data":{"x":1}}`, 0, 0); m.Janus != "success" {
		t.Errorf("custom_event: %s", janus.Encode(m))
	}
	evs := rec.events()
	if last := evs[len(evs)-1]; summary(last) != "4" || last["event"].(map[string]any)["schema"] != "my.source" {
		t.Errorf("external event %v", last)
	}
	info := roundTrip(t, e.g.ServerInfo("i"))
	if info["event_handlers"] != true || info["events"].(map[string]any)["rec"] == nil {
		t.Errorf("server_info: event_handlers %v, events %v", info["event_handlers"], info["events"])
	}
	plain := newEnv(t, nil)
	wantCode(t, plain.admin(pre+`,"handler":"rec"}`, 0, 0), janus.ErrPluginNotFound)
}

// TestPeerHooksEmitWebRTCAndMediaEvents drives a handle's PeerConnection hooks as a peer would: ICE,
// DTLS, the selected pair, webrtcup, media, slowlink and hangup become webrtc and media events in
// Janus's shape; hooks of a PeerConnection that is no longer the handle's emit nothing.
func TestPeerHooksEmitWebRTCAndMediaEvents(t *testing.T) {
	e, rec := newEvhEnv(t, nil)
	sid := e.create()
	h := e.g.handle(e.attach(sid))
	slot := &peerSlot{}
	h.mu.Lock()
	h.slot = slot
	h.mu.Unlock()
	hk := h.hooks(slot)
	n := len(rec.events())
	hk.OnICEState("checking")
	hk.OnICEState("connected")
	hk.OnSelectedPair("127.0.0.1:1 [host,udp] <-> 127.0.0.1:2 [host,udp]")
	hk.OnDTLSState("connected")
	hk.OnUp()
	hk.OnMedia("0", "audio", true)
	hk.OnSlowLink("1", "video", false, 12)
	hk.OnMedia("1", "video", false)
	hk.OnHangup("DTLS alert")
	hk.OnICEState("closed") // the slot is released: ignored
	want := []string{
		`16/1 {"component_id":1,"ice":"checking","stream_id":1}`,
		`16/1 {"component_id":1,"ice":"connected","stream_id":1}`,
		`16/4 {"component_id":1,"selected-pair":"127.0.0.1:1 [host,udp] \u003c-\u003e 127.0.0.1:2 [host,udp]","stream_id":1}`,
		`16/5 {"component_id":1,"dtls":"connected","stream_id":1}`,
		`16/6 {"connection":"webrtcup"}`,
		`32/1 {"media":"audio","mid":"0","receiving":true}`,
		`32/2 {"lost_lastsec":12,"media":"video","mid":"1","slow_link":"downlink"}`,
		`32/1 {"media":"video","mid":"1","receiving":false}`,
		`16/6 {"connection":"hangup","reason":"DTLS alert"}`,
	}
	// Only the WebRTC (16) and media (32) events: the session and handle events of create and
	// attach may still be arriving from their own goroutines.
	var evs []map[string]any
	for _, ev := range rec.events()[n:] {
		if ty := jsonNum(ev["type"]); ty == "16" || ty == "32" {
			evs = append(evs, ev)
		}
	}
	if len(evs) != len(want) {
		t.Fatalf("%d events, want %d: %v", len(evs), len(want), evs)
	}
	for i, ev := range evs {
		body, _ := json.Marshal(ev["event"])
		got := jsonNum(ev["type"]) + "/" + jsonNum(ev["subtype"]) + " " + string(body)
		if got != want[i] {
			t.Errorf("event %d: %s, want %s", i, got, want[i])
		}
		if uint64(ev["handle_id"].(float64)) != h.id || ev["opaque_id"] != "op-1" {
			t.Errorf("event %d ids: %v", i, ev)
		}
	}
}

package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/config"
	"github.com/strata-rtc/strata/internal/events"
	"github.com/strata-rtc/strata/internal/gateway/gatewaytest"
	"github.com/strata-rtc/strata/internal/janus"
	"github.com/strata-rtc/strata/internal/plugin"
)

// FuzzHandleRequest throws arbitrary bytes at the gateway's request handling, over both the Janus
// API and the admin API. Every input must get exactly one reply that is a Janus envelope (a JSON
// object with a known "janus" verb), and nothing may panic. In the input, SESSION and HANDLE are
// replaced by the ids of a live session and handle, so that the fuzzer reaches the deep paths
// (message, trickle, handle_info...) and not only the 458/459 answers.
func FuzzHandleRequest(f *testing.F) {
	seeds := []string{
		`{"janus":"create","transaction":"c"}`,
		`{"janus":"create","transaction":"c","id":SESSION}`,
		`{"janus":"attach","transaction":"a","session_id":SESSION,"plugin":"janus.plugin.testecho"}`,
		`{"janus":"message","transaction":"m","session_id":SESSION,"handle_id":HANDLE,"body":{"request":"sync"}}`,
		`{"janus":"message","transaction":"m","session_id":SESSION,"handle_id":HANDLE,"body":{},"jsep":{"type":"offer","sdp":"v=0\r\no=- 1 2 IN IP4 127.0.0.1\r\ns=-\r\nt=0 0\r\n"}}`,
		`{"janus":"message","transaction":"m","session_id":SESSION,"handle_id":HANDLE,"body":{},"jsep":{"type":"answer","sdp":"v=0\r\n"}}`,
		`{"janus":"trickle","transaction":"t","session_id":SESSION,"handle_id":HANDLE,"candidate":{"completed":true}}`,
		`{"janus":"trickle","transaction":"t","session_id":SESSION,"handle_id":HANDLE,"candidates":[{"candidate":"x","sdpMLineIndex":-1},1]}`,
		`{"janus":"hangup","transaction":"h","session_id":SESSION,"handle_id":HANDLE}`,
		`{"janus":"detach","transaction":"d","session_id":SESSION,"handle_id":HANDLE}`,
		`{"janus":"keepalive","transaction":"k","session_id":SESSION}`,
		`{"janus":"claim","transaction":"k","session_id":SESSION}`,
		`{"janus":"destroy","transaction":"k","session_id":SESSION}`,
		`{"janus":"info","transaction":"i"}`,
		`{"janus":"handle_info","transaction":"h","session_id":SESSION,"handle_id":HANDLE,"admin_secret":"janusoverlord"}`,
		`{"janus":"set_log_level","transaction":"h","level":4,"admin_secret":"janusoverlord"}`,
		`{"janus":"message_plugin","transaction":"h","plugin":"janus.plugin.testecho","request":{},"admin_secret":"janusoverlord"}`,
		`{"janus":"query_eventhandler","transaction":"q","handler":"janus.eventhandler.sampleevh","request":{"request":"tweak","events":"sessions,jsep","max_retransmissions":0},"admin_secret":"janusoverlord"}`,
		`{"janus":"query_eventhandler","transaction":"q","handler":"janus.eventhandler.sampleevh","request":{"request":"stats"},"admin_secret":"janusoverlord"}`,
		`{"janus":"query_eventhandler","transaction":"q","handler":7,"request":[],"admin_secret":"janusoverlord"}`,
		`{"janus":"custom_event","transaction":"q","schema":"s","data":{"a":[1]},"admin_secret":"janusoverlord"}`,
		`[`, `{}`, `{"transaction":1}`, `{"janus":"message","transaction":"m","session_id":SESSION,"handle_id":HANDLE}`,
	}
	for _, s := range seeds {
		f.Add([]byte(s), false)
		f.Add([]byte(s), true)
	}
	cfg := config.Default()
	cfg.Transports.Admin.PcapDir = f.TempDir()         // start_pcap writes nowhere else
	cfg.Transports.Admin.AdminSecret = "janusoverlord" // as the seeds send (the server would generate one)
	cfg.General.SessionTimeout = 0
	// A real HTTP event handler, whose backend refuses every POST: every event path and its
	// query_eventhandler run, and its queue fills and drops.
	evh, err := events.NewHTTP(events.Options{Name: events.HTTPPackage, URL: "http://127.0.0.1:1/", Mask: events.MaskAll,
		Grouping: true, Backoff: time.Millisecond, Queue: 64, Timeout: time.Second}, quietLogger())
	if err != nil {
		f.Fatal(err)
	}
	bus := events.NewBus("fuzz", []events.Handler{evh}, quietLogger())
	defer bus.Close(0)
	g := New(cfg, nil, []plugin.Plugin{gatewaytest.NewEcho(), gatewaytest.Failing{}}, quietLogger(), nil, WithEvents(bus))
	defer g.Close()
	sink := gatewaytest.NewSink()
	var sid, hid uint64
	ensureLive := func() {
		if !g.HasSession(sid) {
			sid = mustDataID(g.Handle(context.Background(), []byte(`{"janus":"create","transaction":"c"}`), Origin{Sink: sink}))
			hid = 0
		}
		if hid == 0 || g.handle(hid) == nil {
			req := `{"janus":"attach","transaction":"a","plugin":"janus.plugin.testecho","session_id":` + strconv.FormatUint(sid, 10) + `}`
			hid = mustDataID(g.Handle(context.Background(), []byte(req), Origin{Sink: sink}))
		}
	}
	f.Fuzz(func(t *testing.T, data []byte, admin bool) {
		ensureLive()
		data = bytes.ReplaceAll(data, []byte("SESSION"), []byte(strconv.FormatUint(sid, 10)))
		data = bytes.ReplaceAll(data, []byte("HANDLE"), []byte(strconv.FormatUint(hid, 10)))
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		var m janus.Message
		if admin {
			m = g.Admin(ctx, data, Origin{})
		} else {
			m = g.Handle(ctx, data, Origin{Sink: sink})
		}
		checkEnvelope(t, m, data)
	})
}

var replyVerbs = map[string]bool{"success": true, "ack": true, "error": true, "pong": true, "server_info": true}

func checkEnvelope(t *testing.T, m janus.Message, in []byte) {
	t.Helper()
	if !replyVerbs[m.Janus] {
		t.Fatalf("reply verb %q for %q", m.Janus, in)
	}
	if m.Janus == "error" && (m.Error == nil || m.Error.Reason == "") {
		t.Fatalf("error without code/reason for %q", in)
	}
	var obj map[string]any
	if err := json.Unmarshal(janus.Encode(m), &obj); err != nil || obj["janus"] != m.Janus {
		t.Fatalf("reply is not a Janus envelope for %q: %v", in, err)
	}
}

func mustDataID(m janus.Message) uint64 {
	if d, ok := m.Data.(map[string]uint64); ok {
		return d["id"]
	}
	panic("setup request failed: " + string(janus.Encode(m)))
}

package gateway

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/config"
	"github.com/strata-rtc/strata/internal/gateway/gatewaytest"
	"github.com/strata-rtc/strata/internal/janus"
	"github.com/strata-rtc/strata/internal/plugin"
)

// testEnv is a gateway with the Echo and Failing plugins and one recording sink.
type testEnv struct {
	t    *testing.T
	g    *Gateway
	echo *gatewaytest.Echo
	sink *gatewaytest.Sink
}

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func newEnv(t *testing.T, mutate func(*config.Config), opts ...Option) *testEnv {
	t.Helper()
	cfg := config.Default()
	// The reference configuration leaves the admin secret to the server, which generates one; the
	// gateway is tested with Janus's sample secret (no listener here).
	cfg.Transports.Admin.AdminSecret = "janusoverlord"
	if mutate != nil {
		mutate(cfg)
	}
	echo := gatewaytest.NewEcho()
	g := New(cfg, nil, []plugin.Plugin{echo, gatewaytest.Failing{}}, quietLogger(), nil, opts...)
	t.Cleanup(g.Close)
	return &testEnv{t: t, g: g, echo: echo, sink: gatewaytest.NewSink()}
}

// do sends a request built from a template in which {S} and {H} stand for ids.
func (e *testEnv) do(tmpl string, sid, hid uint64) janus.Message {
	e.t.Helper()
	return e.doFrom(Origin{Sink: e.sink}, tmpl, sid, hid)
}

func (e *testEnv) doFrom(from Origin, tmpl string, sid, hid uint64) janus.Message {
	e.t.Helper()
	raw := strings.NewReplacer("{S}", strconv.FormatUint(sid, 10), "{H}", strconv.FormatUint(hid, 10)).Replace(tmpl)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return e.g.Handle(ctx, []byte(raw), from)
}

func (e *testEnv) create() uint64 {
	e.t.Helper()
	return e.createOn(e.sink)
}

func (e *testEnv) createOn(sink Sink) uint64 {
	e.t.Helper()
	m := e.doFrom(Origin{Sink: sink}, `{"janus":"create","transaction":"c"}`, 0, 0)
	return dataID(e.t, m)
}

func (e *testEnv) attach(sid uint64) uint64 {
	e.t.Helper()
	m := e.do(`{"janus":"attach","transaction":"a","session_id":{S},"plugin":"`+gatewaytest.EchoPackage+`","opaque_id":"op-1"}`, sid, 0)
	return dataID(e.t, m)
}

func dataID(t *testing.T, m janus.Message) uint64 {
	t.Helper()
	if m.Janus != "success" {
		t.Fatalf("expected success, got %s", janus.Encode(m))
	}
	d, ok := m.Data.(map[string]uint64)
	if !ok || d["id"] == 0 || d["id"] > maxID {
		t.Fatalf("no valid id in %s", janus.Encode(m))
	}
	return d["id"]
}

// roundTrip decodes a message as a client would see it.
func roundTrip(t *testing.T, m janus.Message) map[string]any {
	t.Helper()
	var out map[string]any
	if err := json.Unmarshal(janus.Encode(m), &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func wantCode(t *testing.T, m janus.Message, code janus.Code) {
	t.Helper()
	if m.Janus != "error" || m.Error == nil || m.Error.Code != code {
		t.Fatalf("want error %d, got %s", code, janus.Encode(m))
	}
}

// eventually polls cond for up to 5 s.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not within 5 s: %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

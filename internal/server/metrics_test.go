package server

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/pion/webrtc/v4"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/strata-rtc/strata/internal/janusclient"
)

// scrape is one /metrics page, parsed with Prometheus's own text parser.
type scrape map[string]*dto.MetricFamily

func scrapeMetrics(t *testing.T, srv *Server) scrape {
	t.Helper()
	resp, err := http.Get("http://" + srv.AdminAddr() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(resp.Body)
		t.Fatalf("GET /metrics: %s %s", resp.Status, body)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Errorf("Content-Type %q, want the text format", ct)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parsing /metrics: %v", err)
	}
	return fams
}

// value is the value of the series of family name whose labels include labels ("k=v" pairs); -1
// when there is none. A histogram's value is its sample count.
func (s scrape) value(name string, labels ...string) float64 {
	f := s[name]
	if f == nil {
		return -1
	}
	for _, m := range f.GetMetric() {
		if hasLabels(m, labels) {
			switch {
			case m.Counter != nil:
				return m.Counter.GetValue()
			case m.Gauge != nil:
				return m.Gauge.GetValue()
			case m.Histogram != nil:
				return float64(m.Histogram.GetSampleCount())
			}
		}
	}
	return -1
}

func hasLabels(m *dto.Metric, want []string) bool {
	have := map[string]string{}
	for _, l := range m.GetLabel() {
		have[l.GetName()] = l.GetValue()
	}
	for _, kv := range want {
		k, v, _ := strings.Cut(kv, "=")
		if have[k] != v {
			return false
		}
	}
	return true
}

// TestMetricsDuringACall scrapes /metrics (no admin_secret) before, twice during and after an
// echotest call with a Pion peer: the gauges follow the session, the handle and the
// PeerConnection, the media counters move while media flows and do not go back when the call
// ends, the RTT and estimate histograms fill; /admin still wants its secret.
func TestMetricsDuringACall(t *testing.T) {
	srv := startEchoServer(t)
	before := scrapeMetrics(t, srv)
	expect(t, before, 0, "strata_sessions")
	expect(t, before, 0, "strata_peer_connections")
	expect(t, before, 0, "strata_handles", "plugin=janus.plugin.echotest")
	if before.value("go_goroutines") <= 0 || before.value("process_cpu_seconds_total") < 0 {
		t.Error("no Go runtime or process metrics")
	}
	for name, f := range before {
		if !strings.HasPrefix(name, "strata_") && !strings.HasPrefix(name, "go_") && !strings.HasPrefix(name, "process_") {
			t.Errorf("metric %s is not prefixed strata_ (nor go_ or process_)", name)
		}
		checkLabelsBounded(t, f)
	}
	if r := post(t, "http://"+srv.AdminAddr()+"/admin", `{"janus":"get_status","transaction":"x"}`); r["janus"] != "error" {
		t.Errorf("admin get_status without admin_secret: %v, want error 403", r)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := janusclient.Dial(ctx, "http://"+srv.HTTPAddr()+"/janus")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	sess, h, stop := startEchoCall(ctx, t, c)
	during := waitMetrics(t, srv, func(s scrape) bool {
		return s.value("strata_rtt_seconds") > 0 && s.value("strata_bwe_estimate_bytes_per_second") > 0 &&
			s.value("strata_rtp_packets_total", "direction=out") > 0
	})
	expect(t, during, 1, "strata_sessions")
	expect(t, during, 1, "strata_handles", "plugin=janus.plugin.echotest")
	expect(t, during, 1, "strata_peer_connections")
	time.Sleep(500 * time.Millisecond)
	later := scrapeMetrics(t, srv)
	for _, dir := range []string{"direction=in", "direction=out"} {
		for _, kind := range []string{"kind=audio", "kind=video"} {
			for _, name := range []string{"strata_rtp_packets_total", "strata_rtp_bytes_total"} {
				if a, b := during.value(name, dir, kind), later.value(name, dir, kind); !(b > a && a > 0) {
					t.Errorf("%s{%s,%s}: %v then %v, want it to grow while media flows", name, dir, kind, a, b)
				}
			}
		}
	}

	close(stop)
	if err := h.Hangup(ctx); err != nil {
		t.Fatal(err)
	}
	if err := sess.Destroy(ctx); err != nil {
		t.Fatal(err)
	}
	after := waitMetrics(t, srv, func(s scrape) bool {
		return s.value("strata_sessions") == 0 && s.value("strata_peer_connections") == 0
	})
	expect(t, after, 0, "strata_handles", "plugin=janus.plugin.echotest")
	expect(t, after, 1, "strata_peer_connections_created_total")
	for _, dir := range []string{"direction=in", "direction=out"} {
		expect(t, later, 0, "strata_rtp_packets_total", dir, "kind=other") // every stream's codec names its kind
	}
	if a, b := later.value("strata_rtp_packets_total", "direction=in", "kind=video"), after.value("strata_rtp_packets_total", "direction=in", "kind=video"); b < a {
		t.Errorf("packets in went back from %v to %v when the PeerConnection closed", a, b)
	}
}

// startEchoCall attaches to the echotest, negotiates and sends media until stop is closed.
func startEchoCall(ctx context.Context, t *testing.T, c *janusclient.Client) (*janusclient.Session, *janusclient.Handle, chan struct{}) {
	t.Helper()
	sess, err := c.Create(ctx)
	if err != nil {
		t.Fatal(err)
	}
	h, err := sess.Attach(ctx, "janus.plugin.echotest")
	if err != nil {
		t.Fatal(err)
	}
	b := newEchoBrowser(t)
	ev, err := h.Message(ctx, map[string]any{"audio": true, "video": true}, &janusclient.JSEP{Type: "offer", SDP: b.offer(t)})
	if err != nil || ev.JSEP == nil {
		t.Fatalf("offer: %v", err)
	}
	if err := b.pc.SetRemoteDescription(webrtc.SessionDescription{Type: webrtc.SDPTypeAnswer, SDP: ev.JSEP.SDP}); err != nil {
		t.Fatal(err)
	}
	waitEvent(t, h, "webrtcup", func(e *janusclient.Event) bool { return e.Janus == "webrtcup" })
	// Pion hands the client's report interceptor strata's sender reports only as the receiver's
	// RTCP is read; without them its receiver reports carry no LSR, and give strata no RTT.
	for _, r := range b.pc.GetReceivers() {
		go func() {
			for {
				if _, _, err := r.ReadRTCP(); err != nil {
					return
				}
			}
		}()
	}
	stop := make(chan struct{})
	go b.sendMedia(stop)
	return sess, h, stop
}

func expect(t *testing.T, s scrape, want float64, name string, labels ...string) {
	t.Helper()
	if got := s.value(name, labels...); got != want {
		t.Errorf("%s%v = %v, want %v", name, labels, got, want)
	}
}

// waitMetrics scrapes until ok holds (10 s at most).
func waitMetrics(t *testing.T, srv *Server, ok func(scrape) bool) scrape {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		s := scrapeMetrics(t, srv)
		if ok(s) {
			return s
		}
		if time.Now().After(deadline) {
			var b strings.Builder
			for name := range s {
				if strings.HasPrefix(name, "strata_") {
					fmt.Fprintf(&b, "%s=%v ", name, s.value(name))
				}
			}
			t.Fatalf("metrics never reached the expected state: %s", b.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// checkLabelsBounded: strata's labels are names from fixed sets, never ids.
func checkLabelsBounded(t *testing.T, f *dto.MetricFamily) {
	t.Helper()
	allowed := map[string]bool{"plugin": true, "direction": true, "kind": true, "change": true, "le": true, "quantile": true, "version": true}
	for _, m := range f.GetMetric() {
		for _, l := range m.GetLabel() {
			if !allowed[l.GetName()] {
				t.Errorf("%s has label %s=%s", f.GetName(), l.GetName(), l.GetValue())
			}
		}
	}
}

// TestMetricsEndpointRefusesBadRequests: only GET and HEAD at exactly /metrics; the admin API
// beside it is unchanged.
func TestMetricsEndpointRefusesBadRequests(t *testing.T) {
	srv := startServer(t, testConfig(t))
	base := "http://" + srv.AdminAddr()
	for _, c := range []struct {
		method, path string
		status       int
	}{
		{http.MethodPost, "/metrics", http.StatusMethodNotAllowed},
		{http.MethodDelete, "/metrics", http.StatusMethodNotAllowed},
		{http.MethodGet, "/metrics/extra", http.StatusNotFound},
		{http.MethodGet, "/metrics?x=%zz", http.StatusOK},
		{http.MethodHead, "/metrics", http.StatusOK},
	} {
		req, err := http.NewRequest(c.method, base+c.path, strings.NewReader("{}"))
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.status {
			t.Errorf("%s %s: %s, want %d", c.method, c.path, resp.Status, c.status)
		}
		if c.status == http.StatusMethodNotAllowed && resp.Header.Get("Allow") != "GET, HEAD" {
			t.Errorf("%s %s: Allow %q", c.method, c.path, resp.Header.Get("Allow"))
		}
	}
	if r := post(t, base+"/admin", fmt.Sprintf(`{"janus":"get_status","transaction":"x","admin_secret":%q}`, testAdminSecret)); r["janus"] != "success" {
		t.Errorf("admin get_status: %v", r)
	}
}

// TestMetricsOff: with transports.admin.metrics false, /metrics is 404 and the admin API works.
func TestMetricsOff(t *testing.T) {
	cfg := testConfig(t)
	cfg.Transports.Admin.Metrics = false
	srv := startServer(t, cfg)
	resp, err := http.Get("http://" + srv.AdminAddr() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("GET /metrics with metrics off: %s, want 404", resp.Status)
	}
	if r := post(t, "http://"+srv.AdminAddr()+"/admin", `{"janus":"ping","transaction":"x"}`); r["janus"] != "pong" {
		t.Errorf("admin ping: %v", r)
	}
}

package server

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/dashboard"
	"github.com/strata-rtc/strata/internal/janusclient"
)

// getDashboard GETs path on the admin listener with auth as the Authorization header ("" none).
func getDashboard(t *testing.T, srv *Server, path, auth string) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, "http://"+srv.AdminAddr()+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, body
}

func dashboardSnapshot(t *testing.T, srv *Server) dashboard.Snapshot {
	t.Helper()
	code, _, body := getDashboard(t, srv, "/dashboard/data", "Bearer "+testAdminSecret)
	if code != http.StatusOK {
		t.Fatalf("GET /dashboard/data: %d %s", code, body)
	}
	var s dashboard.Snapshot
	if err := json.Unmarshal(body, &s); err != nil {
		t.Fatalf("snapshot: %v in %s", err, body)
	}
	return s
}

// TestDashboardDataRefusesWithoutTheSecret: no token is 401 with a challenge, a wrong one 403.
func TestDashboardDataRefusesWithoutTheSecret(t *testing.T) {
	srv := startEchoServer(t)
	for _, c := range []struct {
		auth string
		want int
	}{
		{"", http.StatusUnauthorized},
		{"Basic " + testAdminSecret, http.StatusUnauthorized},
		{"Bearer wrong", http.StatusForbidden},
		{"Bearer " + testAdminSecret + "x", http.StatusForbidden},
	} {
		code, h, body := getDashboard(t, srv, "/dashboard/data", c.auth)
		if code != c.want || len(body) == 0 {
			t.Errorf("Authorization %q: %d %q, want %d with a reason", c.auth, code, body, c.want)
		}
		if code == http.StatusUnauthorized && !strings.HasPrefix(h.Get("WWW-Authenticate"), "Bearer") {
			t.Errorf("401 without a Bearer challenge: %v", h)
		}
		if strings.Contains(string(body), "session") {
			t.Errorf("refused reply leaks data: %s", body)
		}
	}
}

// TestDashboardPageReferencesOnlyEmbeddedAssets: the page loads, and every src/href it names is
// served by strata itself under /dashboard (no CDN); a strict CSP keeps it so.
func TestDashboardPageReferencesOnlyEmbeddedAssets(t *testing.T) {
	srv := startEchoServer(t)
	code, h, page := getDashboard(t, srv, "/dashboard", "")
	if code != http.StatusOK || !strings.HasPrefix(h.Get("Content-Type"), "text/html") {
		t.Fatalf("GET /dashboard: %d %s", code, h.Get("Content-Type"))
	}
	if csp := h.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") || !strings.Contains(csp, "script-src 'self'") {
		t.Errorf("CSP %q", csp)
	}
	refs := regexp.MustCompile(`(?:src|href)="([^"]*)"`).FindAllStringSubmatch(string(page), -1)
	if len(refs) < 2 {
		t.Fatalf("page names %d assets, want its script and stylesheet", len(refs))
	}
	for _, r := range refs {
		if !strings.HasPrefix(r[1], "/dashboard/") {
			t.Errorf("page references %q, outside strata's embedded assets", r[1])
			continue
		}
		if code, _, body := getDashboard(t, srv, r[1], ""); code != http.StatusOK || len(body) == 0 {
			t.Errorf("asset %s: %d", r[1], code)
		}
		_, _, body := getDashboard(t, srv, r[1], "")
		checkNoOtherOrigin(t, r[1], body)
	}
	checkNoOtherOrigin(t, "/dashboard", page)
	if code, _, _ := getDashboard(t, srv, "/dashboard/nothing.js", ""); code != http.StatusNotFound {
		t.Errorf("unknown asset: %d, want 404", code)
	}
}

// checkNoOtherOrigin fails on any absolute URL but the SVG namespace (a name, never fetched).
func checkNoOtherOrigin(t *testing.T, name string, body []byte) {
	t.Helper()
	for _, u := range regexp.MustCompile(`(?i)(?:https?:)?//[a-z0-9.-]+\.[a-z]{2,}[^'"\s]*`).FindAll(body, -1) {
		if string(u) != "http://www.w3.org/2000/svg" {
			t.Errorf("%s names %s, outside strata", name, u)
		}
	}
}

// TestDashboardDuringACall runs an echotest call with a Pion peer and reads two snapshots: the
// session, the handle's PeerConnection with bitrates > 0 that move, its estimate and RTT.
func TestDashboardDuringACall(t *testing.T) {
	srv := startEchoServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := janusclient.Dial(ctx, "http://"+srv.HTTPAddr()+"/janus")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	sess, h, stop := startEchoCall(ctx, t, c)
	defer close(stop)

	first := waitPC(t, srv, h.ID, func(pc dashboard.PeerConnection) bool {
		return pc.BitrateIn > 0 && pc.BitrateOut > 0 && pc.Estimate > 0 && pc.RTTMs > 0
	})
	time.Sleep(1200 * time.Millisecond)
	snap := dashboardSnapshot(t, srv)
	second, ok := findPC(snap, h.ID)
	if !ok {
		t.Fatalf("handle %d gone from the second snapshot", h.ID)
	}
	if second.BitrateIn == 0 || second.BitrateOut == 0 || (second.BitrateIn == first.BitrateIn && second.BitrateOut == first.BitrateOut) {
		t.Errorf("PeerConnection did not move between snapshots: %+v then %+v", first, second)
	}
	if snap.SessionCount != 1 || len(snap.Sessions) != 1 || snap.Sessions[0].ID != sess.ID || snap.Sessions[0].Handles != 1 {
		t.Errorf("sessions %d %+v, want session %d with 1 handle", snap.SessionCount, snap.Sessions, sess.ID)
	}
	if second.Session != sess.ID || second.Plugin != "janus.plugin.echotest" || snap.PeerCount != 1 {
		t.Errorf("PeerConnection %+v (of %d), want the echotest handle of session %d", second, snap.PeerCount, sess.ID)
	}
	for _, p := range snap.Plugins {
		if p.Name == "janus.plugin.echotest" && p.Handles != 1 {
			t.Errorf("echotest handles %d, want 1", p.Handles)
		}
	}
	if snap.Netctl != nil {
		t.Errorf("netctl %v without a controller configured", snap.Netctl)
	}
}

func findPC(s dashboard.Snapshot, handle uint64) (dashboard.PeerConnection, bool) {
	for _, pc := range s.PeerConnections {
		if pc.Handle == handle {
			return pc, true
		}
	}
	return dashboard.PeerConnection{}, false
}

// waitPC polls the snapshots (as the page does, every second) until handle's PeerConnection is ok.
func waitPC(t *testing.T, srv *Server, handle uint64, ok func(dashboard.PeerConnection) bool) dashboard.PeerConnection {
	t.Helper()
	var last dashboard.PeerConnection
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(time.Second) {
		if pc, found := findPC(dashboardSnapshot(t, srv), handle); found {
			if last = pc; ok(pc) {
				return pc
			}
		}
	}
	t.Fatalf("handle %d never showed bitrates, estimate and RTT: last %+v", handle, last)
	return last
}

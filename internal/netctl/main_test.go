package netctl

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/syncbuf"

	"github.com/strata-rtc/strata/internal/netctl/api"
)

func TestMainServe(t *testing.T) {
	noSwitch := filepath.Join(t.TempDir(), "br0.mgmt") // a switch that is not there
	ctx, cancel := context.WithCancel(context.Background())
	var stdout, stderr syncbuf.Buffer
	code := make(chan int, 1)
	go func() {
		code <- run(ctx, []string{"serve", "-topology", "../../configs/netctl/seed000-exp1.yaml", "-listen", "127.0.0.1:0", "-hold", "1s",
			"-switch", "paris=unix:" + noSwitch, "-resync", "50ms"}, &stdout, &stderr)
	}()
	re := regexp.MustCompile(`serving on (http://127\.0\.0\.1:\d+)`)
	var url string
	for deadline := time.Now().Add(5 * time.Second); url == "" && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if m := re.FindStringSubmatch(stdout.String()); m != nil {
			url = m[1]
		}
	}
	if url == "" {
		cancel()
		t.Fatalf("no address announced; stdout %q stderr %q", stdout.String(), stderr.String())
	}
	resp, err := http.Get(url + "/v1/health")
	if err != nil {
		t.Fatal(err)
	}
	var h api.Health
	_ = json.NewDecoder(resp.Body).Decode(&h)
	resp.Body.Close()
	if !h.OK || h.Topology != "seed000-exp1" {
		t.Fatalf("health %+v", h)
	}
	// The switch is reported unreachable, with the reason, and the controller keeps serving.
	var sw api.Switch
	for deadline := time.Now().Add(5 * time.Second); sw.State != api.SwitchUnreachable; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("switch %+v, want unreachable", sw)
		}
		resp, err := http.Get(url + "/v1/switches/paris")
		if err != nil {
			t.Fatal(err)
		}
		_ = json.NewDecoder(resp.Body).Decode(&sw)
		resp.Body.Close()
	}
	if sw.Node != "paris" || sw.Bridge != "br0" || !strings.Contains(sw.Error, noSwitch) {
		t.Errorf("switch %+v: want node paris, bridge br0 and an error naming the socket", sw)
	}
	resp, err = http.Get(url + "/")
	if err != nil {
		t.Fatal(err)
	}
	page := new(bytes.Buffer)
	_, _ = page.ReadFrom(resp.Body)
	resp.Body.Close()
	if !strings.Contains(page.String(), "<h2>Switches</h2>") || !strings.Contains(page.String(), "unreachable") {
		t.Errorf("the status page does not show the unreachable switch:\n%s", page)
	}
	// An open decision stream must not hold up the shutdown.
	stream, err := http.Get(url + "/v1/decisions/stream")
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Body.Close()
	cancel()
	select {
	case c := <-code:
		if c != 0 {
			t.Fatalf("exit code %d, stderr %q", c, stderr.String())
		}
	case <-time.After(5 * time.Second):
		t.Fatal("serve did not stop within 5 s of the signal")
	}
}

func TestMainUsageAndCheck(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(bad, []byte("nodes: [a]\nlinks:\n  - {from: a, to: b, capacity: 10}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		args   []string
		code   int
		output string
	}{
		{nil, 2, "usage: strata netctl"},
		{[]string{"help"}, 0, "usage: strata netctl"},
		{[]string{"frobnicate"}, 2, `unknown command "frobnicate"`},
		{[]string{"serve"}, 2, "-topology FILE is required"},
		{[]string{"serve", "-topology", bad}, 1, "bad.yaml:3: links[0].to: unknown node \"b\""},
		{[]string{"serve", "-topology", "../../configs/netctl/loopback.yaml", "-mode", "greedy"}, 2, "unknown mode"},
		{[]string{"serve", "-no-such-flag"}, 2, "flag provided but not defined"},
		{[]string{"serve", "-topology", "../../configs/netctl/seed000-exp1.yaml", "-switch", "paris"}, 2, "want NODE=TARGET"},
		{[]string{"serve", "-topology", "../../configs/netctl/seed000-exp1.yaml", "-switch", "rome=unix:/x.mgmt"}, 2, `unknown node "rome"`},
		{[]string{"serve", "-topology", "../../configs/netctl/seed000-exp1.yaml", "-switch", "madrid=unix:/x.mgmt"}, 2, `node "madrid" is not an enforcer`},
		{[]string{"serve", "-topology", "../../configs/netctl/seed000-exp1.yaml", "-switch", "paris=unix:/x.mgmt", "-switch", "paris=unix:/y.mgmt"}, 2, `node "paris" has two switches`},
		{[]string{"serve", "-topology", "../../configs/netctl/seed000-exp1.yaml", "-resync", "0s"}, 2, "-resync must be positive"},
		{[]string{"agent", "-node", "x"}, 2, "-controller URL and -node NAME are required"},
		{[]string{"agent", "-controller", "http://127.0.0.1:1", "-node", "x", "-interfaces", "no-such-iface0"}, 1, "no-such-iface0"},
		{[]string{"check", "-topology", bad}, 1, "capacity: rate \"10\" has no unit"},
		{[]string{"check", "-topology", "../../configs/netctl/geant.yaml"}, 0, "8 nodes, 20 links"},
	}
	for _, c := range cases {
		var stdout, stderr syncbuf.Buffer
		got := run(context.Background(), c.args, &stdout, &stderr)
		out := stdout.String() + stderr.String()
		if got != c.code || !strings.Contains(out, c.output) {
			t.Errorf("%v: exit %d, output %q; want %d and %q", c.args, got, out, c.code, c.output)
		}
	}
}

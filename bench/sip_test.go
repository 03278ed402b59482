package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	strataconfig "github.com/strata-rtc/strata/internal/config"
	"github.com/strata-rtc/strata/internal/load/plan"
	"github.com/strata-rtc/strata/internal/load/report"
	"github.com/strata-rtc/strata/internal/rig"
)

// sipResult is a sip run with steps of 10 and 20 calls at cpu % of a core and rss MB, whose
// callers got matched of their 1000 packets back.
func sipResult(cpu, rss []float64, matched uint64) *report.Result {
	r := &report.Result{Plan: plan.SIPEcho("http://h/janus", "sip:echo@h:5090", 20, 10, 10e9)}
	r.Server.BaselineRSSBytes = 20 << 20
	for i := range cpu {
		r.Steps = append(r.Steps, report.Step{Participants: 10 * (i + 1), ServerOK: true, ServerCPUPct: cpu[i],
			ServerRSSBytes: int64(rss[i] * (1 << 20)), NetInMbps: 0.5, NetOutMbps: 0.5, EchoShare: 1})
	}
	for range 20 {
		r.Totals.SIP.AddSIPCall(report.SIPCall{SetupMs: 30, Sent: 1000, Matched: matched, RTTSumMs: float64(matched), RTTMaxMs: 4})
	}
	r.Totals.SIP.Finish()
	return r
}

func TestSIPReport(t *testing.T) {
	c := config{targets: []string{"strata", "janus"}, out: t.TempDir()}
	// strata: 10 % of a core and 30 MB at 20 calls; Janus 20 % and 40 MB.
	o := &outcome{name: sipScenario, runs: map[string][]*report.Result{
		"strata": {sipResult([]float64{5, 10}, []float64{25, 30}, 1000)},
		"janus":  {sipResult([]float64{10, 20}, []float64{30, 40}, 1000)},
	}}
	var b strings.Builder
	writeSIPScenario(&b, c, o)
	out := b.String()
	for _, want := range []string{
		// 10 % of a core over 20 calls is 0.3 s of CPU per call-minute; (30-20) MB / 20 calls is 512 kB.
		"| 20 | 10.0 | 0.300 | 30.0 | 512 | 0.50 / 0.50 | 100.0 |",
		"| 20 | 20.0 | 0.600 | 40.0 | 1024 |",
		"At 20 calls", "| **CPU s per call-minute** | 0.300 | 0.600 | 0.50 |", "| **RSS per call, kB** | 512 | 1024 | 0.50 |",
		"100.00 % of the audio sent came back",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	for _, f := range []string{"compare-cpu.svg", "compare-memory.svg", "compare-bandwidth.svg"} {
		if _, err := os.Stat(filepath.Join(c.out, sipScenario, f)); err != nil {
			t.Error(err)
		}
	}

	// A server whose callers heard nothing gets no figures, and no comparison is made.
	o.runs["janus"] = []*report.Result{sipResult([]float64{10, 20}, []float64{30, 40}, 0)}
	b.Reset()
	writeSIPScenario(&b, c, o)
	out = b.String()
	if !strings.Contains(out, "**janus**: broken run, no figures") || !strings.Contains(out, "20 callers got none of their audio back") ||
		strings.Contains(out, "| 20 | 20.0 |") || !strings.Contains(out, "no comparison") {
		t.Errorf("broken Janus run:\n%s", out)
	}
}

func TestSIPScenario(t *testing.T) {
	ns := &rig.Netns{HostIP: "10.231.5.1", ServerIP: "10.231.5.2"}
	sc := sipEchoScenario(sipScales["small"].merge(sipScale{Max: 20}), "http://10.231.5.2:8088/janus", ns)
	if sc.name != sipScenario || len(sc.plans) != 1 || sc.sidecar == nil || !strings.Contains(sc.strataYAML, `"10.231.5.2"`) {
		t.Fatalf("scenario %+v", sc)
	}
	p := sc.plans[0]
	if err := p.Validate(); err != nil || p.SIP.Calls != 20 || p.Steps.Size != 10 || p.SIP.URI != "sip:echo@10.231.5.1:5090" {
		t.Fatalf("plan %+v: %v", p, err)
	}
	c := config{Binaries: rig.Binaries{Janus: "/usr/bin/janus", JanusLib: t.TempDir()}}
	dir := t.TempDir()
	if _, err := target(c, "janus", p, "").Write(dir, ns.ServerIP, "veth9", 8088); err != nil {
		t.Fatal(err)
	}
	jcfg, err := os.ReadFile(filepath.Join(dir, "janus.plugin.sip.jcfg"))
	if err != nil || !strings.Contains(string(jcfg), `local_ip = "10.231.5.2"`) || !strings.Contains(string(jcfg), `rtp_port_range = "20000-40000"`) {
		t.Fatalf("Janus's SIP plugin configuration: %v\n%s", err, jcfg)
	}
	argv, err := target(c, "strata", p, sc.strataYAML).Write(t.TempDir(), ns.ServerIP, "veth9", 8088)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := strataconfig.Load(argv[len(argv)-1])
	if err != nil || !cfg.Plugins.SIP.Enabled || cfg.Plugins.SIP.LocalIP != ns.ServerIP {
		t.Fatalf("strata's SIP configuration: %+v, %v", cfg.Plugins.SIP, err)
	}
}

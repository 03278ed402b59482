package report

import (
	"strings"
	"testing"

	"github.com/strata-rtc/strata/internal/load/plan"
)

// sipRun is a finished run of 3 calls whose callers got back what the calls give.
func sipRun(calls ...SIPCall) *Result {
	r := &Result{Plan: plan.SIPEcho("http://h/janus", "sip:echo@h:5090", 3, 1, 3e9)}
	for _, c := range calls {
		r.Totals.SIP.AddSIPCall(c)
	}
	r.Totals.SIP.Finish()
	return r
}

func TestSIPTotalsAndCheck(t *testing.T) {
	good := SIPCall{SetupMs: 20, ConnectedMs: 60, Sent: 1000, Matched: 995, RTTSumMs: 995 * 2, RTTMaxMs: 9}
	r := sipRun(good, good, SIPCall{SetupMs: 80, ConnectedMs: 120, Sent: 1000, Matched: 1000, RTTSumMs: 4000, RTTMaxMs: 30})
	s := r.Totals.SIP
	if s.Calls != 3 || s.SetupMeanMs != 40 || s.SetupMaxMs != 80 || s.ConnectedMeanMs != 80 || s.EchoSent != 3000 || s.EchoMatched != 2990 ||
		s.RTTMaxMs != 30 || s.RTTMeanMs < 2.66 || s.RTTMeanMs > 2.67 {
		t.Fatalf("totals %+v", s)
	}
	if err := r.SIPCheck(); err != nil {
		t.Fatalf("three working calls: %v", err)
	}
	var b strings.Builder
	writeSIP(&b, r)
	for _, want := range []string{"| calls connected | 3 of 3 |", "2990 of 3000 packets (99.67 %)", "| verdict | every call worked |"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, b.String())
		}
	}

	// A gateway that connects calls but relays nothing back, drops half, or hangs up gives no
	// figures; nor does one whose echo decodes to silence.
	broken := sipRun(good, SIPCall{Sent: 1000}, SIPCall{Sent: 1000, Matched: 500, HungUp: "503 Service Unavailable"})
	err := broken.SIPCheck()
	if err == nil {
		t.Fatal("a broken run passed the check")
	}
	for _, want := range []string{"1 callers got none", "1 callers got less than 90 %", "1 calls ended"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("check %q lacks %q", err, want)
		}
	}
	short := sipRun(good, good)
	if err := short.SIPCheck(); err == nil || !strings.Contains(err.Error(), "2 of 3 calls connected") {
		t.Errorf("a run with a failed call: %v", err)
	}
	quiet := sipRun(good, good, good)
	quiet.Totals.SIP.Listeners, quiet.Totals.SIP.AudibleShare, quiet.Totals.SIP.EchoDBov = 2, 0.1, -70
	if err := quiet.SIPCheck(); err == nil || !strings.Contains(err.Error(), "audible") {
		t.Errorf("silent echo: %v", err)
	}
}

package report

import (
	"errors"
	"fmt"
	"strings"
)

// SIPTotals are what the SIP callers measured (plan.SIP): call set-up, and whether each got its
// own audio back from the echo service, bit for bit (payloads matched against those sent) and,
// for the decoding callers, at the level it was sent.
type SIPTotals struct {
	// Calls is how many calls were accepted and connected.
	Calls int `json:"calls"`
	// Call set-up: the call request to the accepted event (INVITE to 200 OK through the server),
	// and to the PeerConnection being up.
	SetupMeanMs     float64 `json:"setup_mean_ms"`
	SetupMaxMs      float64 `json:"setup_max_ms"`
	ConnectedMeanMs float64 `json:"connected_mean_ms"`
	// Echo: payloads sent, received packets whose payload was one sent, their share, and the
	// round trip through the server and the echo service.
	EchoSent    uint64  `json:"echo_sent"`
	EchoMatched uint64  `json:"echo_matched"`
	EchoShare   float64 `json:"echo_share"`
	RTTMeanMs   float64 `json:"rtt_mean_ms"`
	RTTMaxMs    float64 `json:"rtt_max_ms"`
	// Silent is how many connected callers got none of their audio back; LowEcho how many got
	// less than MinEchoShare of it; HungUp how many calls ended before the run did.
	Silent  int `json:"silent"`
	LowEcho int `json:"low_echo"`
	HungUp  int `json:"hung_up"`
	// The decoding callers: frames decoded, their mean level and the share above the audible
	// threshold (the callers send a continuous tone, so every frame should be).
	Listeners    int     `json:"listeners"`
	Decoded      uint64  `json:"decoded"`
	EchoDBov     float64 `json:"echo_mean_dbov"`
	AudibleShare float64 `json:"audible_share"`
}

// MinEchoShare is the share of its sent audio a caller must get back for its call to count as
// working: packets in flight when the run ends, and a little loss, are allowed for.
const MinEchoShare = 0.9

// SIPCall is one caller's figures, as the run collects them.
type SIPCall struct {
	SetupMs, ConnectedMs float64
	Sent, Matched        uint64
	RTTSumMs, RTTMaxMs   float64
	HungUp               string
}

// AddSIPCall adds one connected caller to the totals (call Finish after the last).
func (t *SIPTotals) AddSIPCall(c SIPCall) {
	t.Calls++
	t.SetupMeanMs += c.SetupMs
	t.SetupMaxMs = max(t.SetupMaxMs, c.SetupMs)
	t.ConnectedMeanMs += c.ConnectedMs
	t.EchoSent += c.Sent
	t.EchoMatched += c.Matched
	t.RTTMeanMs += c.RTTSumMs
	t.RTTMaxMs = max(t.RTTMaxMs, c.RTTMaxMs)
	switch {
	case c.Matched == 0:
		t.Silent++
	case float64(c.Matched) < MinEchoShare*float64(c.Sent):
		t.LowEcho++
	}
	if c.HungUp != "" {
		t.HungUp++
	}
}

// Finish turns the sums into means.
func (t *SIPTotals) Finish() {
	if t.Calls > 0 {
		t.SetupMeanMs /= float64(t.Calls)
		t.ConnectedMeanMs /= float64(t.Calls)
	}
	if t.EchoMatched > 0 {
		t.RTTMeanMs /= float64(t.EchoMatched)
	}
	if t.EchoSent > 0 {
		t.EchoShare = float64(t.EchoMatched) / float64(t.EchoSent)
	}
}

// SIPCheck says why a SIP run's figures are not those of working calls (nil when they are):
// calls that failed or ended early, callers who did not get their own audio back, or decoded
// echo that was not audible. A broken gateway must not produce numbers.
func (r *Result) SIPCheck() error {
	p, s := r.Plan, r.Totals.SIP
	var errs []error
	if s.Calls < p.SIP.Calls {
		errs = append(errs, fmt.Errorf("%d of %d calls connected", s.Calls, p.SIP.Calls))
	}
	if s.Silent > 0 {
		errs = append(errs, fmt.Errorf("%d callers got none of their audio back", s.Silent))
	}
	if s.LowEcho > 0 {
		errs = append(errs, fmt.Errorf("%d callers got less than %.0f %% of their audio back", s.LowEcho, 100*MinEchoShare))
	}
	if s.HungUp > 0 {
		errs = append(errs, fmt.Errorf("%d calls ended before the run did", s.HungUp))
	}
	if s.Listeners > 0 && s.AudibleShare < MinEchoShare {
		errs = append(errs, fmt.Errorf("only %.0f %% of the decoded echo was audible (mean %.1f dBov)", 100*s.AudibleShare, s.EchoDBov))
	}
	return errors.Join(errs...)
}

// writeSIP adds the SIP callers' section to report.md.
func writeSIP(b *strings.Builder, r *Result) {
	if !r.Plan.IsSIP() {
		return
	}
	s := r.Totals.SIP
	b.WriteString("\n## SIP calls\n\n| | |\n|---|---|\n")
	row := func(k, v string) { fmt.Fprintf(b, "| %s | %s |\n", k, v) }
	row("calls connected", fmt.Sprintf("%d of %d", s.Calls, r.Plan.SIP.Calls))
	row("call set-up (call → accepted)", fmt.Sprintf("mean %.0f ms, max %.0f ms; to the PeerConnection up: mean %.0f ms", s.SetupMeanMs, s.SetupMaxMs, s.ConnectedMeanMs))
	row("own audio back", fmt.Sprintf("%d of %d packets (%.2f %%); %d callers got none, %d less than %.0f %%, %d calls ended early",
		s.EchoMatched, s.EchoSent, 100*s.EchoShare, s.Silent, s.LowEcho, 100*MinEchoShare, s.HungUp))
	row("round trip (server + echo service)", fmt.Sprintf("mean %.1f ms, max %.1f ms", s.RTTMeanMs, s.RTTMaxMs))
	if s.Listeners > 0 {
		row("decoded echo", fmt.Sprintf("%d callers, %d frames, mean %.1f dBov, %.1f %% audible", s.Listeners, s.Decoded, s.EchoDBov, 100*s.AudibleShare))
	}
	verdict := "every call worked"
	if err := r.SIPCheck(); err != nil {
		verdict = "**broken**: " + strings.ReplaceAll(err.Error(), "\n", "; ")
	}
	row("verdict", verdict)
}

package load

import (
	"context"
	"fmt"
	"time"

	"github.com/strata-rtc/strata/internal/load/client"
	"github.com/strata-rtc/strata/internal/load/report"
	"github.com/strata-rtc/strata/internal/load/voice"
)

// joinCaller starts SIP caller i's call; the first plan.SIP.Decode callers decode their echo,
// which should be the tone they send all along.
func (r *run) joinCaller(ctx context.Context, i int) {
	var listener *client.Listener
	if i < r.plan.SIP.Decode {
		var err error
		if listener, err = client.NewListener(func(time.Duration) voice.Expectation { return voice.Speech }); err != nil {
			r.fail(err)
			return
		}
	}
	c, err := client.Call(ctx, r.env, i, r.plan.SIP.URI, listener)
	if err != nil {
		r.fail(err)
		return
	}
	r.mu.Lock()
	r.calls[i] = c
	r.mu.Unlock()
}

// joinedCallers are the callers whose call connected.
func (r *run) joinedCallers() []*client.Caller {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []*client.Caller
	for _, c := range r.calls {
		if c != nil {
			out = append(out, c)
		}
	}
	return out
}

// collectCallers adds the SIP callers to the result: what each sent, what came back as a
// subscription of one stream, and the calls' totals. The caller holds r.mu.
func (r *run) collectCallers(res *report.Result, now time.Duration) {
	s := &res.Totals.SIP
	var heard client.ListenCounts
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	for _, c := range r.calls {
		if c == nil {
			continue
		}
		st := c.Sent()
		res.Publishers = append(res.Publishers, report.Publisher{Index: c.Index, Packets: st.Packets, Bytes: st.Bytes, LateSkips: st.Late, SendErrors: st.Errors})
		res.Subscriptions = append(res.Subscriptions, report.Subscription{Index: c.Index, Owner: c.Index, Expected: 1})
		res.Streams = append(res.Streams, report.Stream{Subscription: c.Index, Owner: c.Index, Feed: c.Index, Mid: "echo", Summary: c.In().Summarize(now)})
		e := c.Echo()
		s.AddSIPCall(report.SIPCall{SetupMs: ms(c.Setup), ConnectedMs: ms(c.Connected), Sent: e.Sent, Matched: e.Matched,
			RTTSumMs: ms(e.RTTSum), RTTMaxMs: ms(e.RTTMax), HungUp: c.HungUp()})
		if reason := c.HungUp(); reason != "" {
			res.Errors = append(res.Errors, fmt.Sprintf("sip caller %d: call ended: %s", c.Index, reason))
		}
		if l := c.Listener(); l != nil {
			s.Listeners++
			lc := l.Counts()
			heard.Decoded += lc.Decoded
			heard.SpeechFrames += lc.SpeechFrames
			heard.Audible += lc.Audible
			heard.SpeechDBSum += lc.SpeechDBSum
		}
	}
	s.Finish()
	s.Decoded = heard.Decoded
	if heard.SpeechFrames > 0 {
		s.EchoDBov = heard.SpeechDBSum / float64(heard.SpeechFrames)
		s.AudibleShare = float64(heard.Audible) / float64(heard.SpeechFrames)
	}
}

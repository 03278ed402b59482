package load

import (
	"context"
	"time"

	"github.com/strata-rtc/strata/internal/load/client"
	"github.com/strata-rtc/strata/internal/load/mediasrc"
	"github.com/strata-rtc/strata/internal/load/plan"
	"github.com/strata-rtc/strata/internal/load/report"
	"github.com/strata-rtc/strata/internal/load/voice"
)

// voiceRun is the talk of a run with voice media: the shared, pre-encoded voices and the floor
// that decides who talks.
type voiceRun struct {
	bank  *voice.Bank
	floor *voice.Floor
}

func newVoiceRun(p plan.Plan) (*voiceRun, error) {
	bank, err := voice.Default()
	if err != nil {
		return nil, err
	}
	pat := voice.DefaultPattern()
	pat.Talkers, pat.Seed = p.Talkers, p.Seed
	if err := pat.Validate(); err != nil {
		return nil, err
	}
	return &voiceRun{bank: bank, floor: voice.NewFloor(pat, p.Publishers+p.AudioBridge.Participants)}, nil
}

// source is participant (or publisher) index's voice.
func (v *voiceRun) source(index int) mediasrc.AudioSource {
	return voice.NewSource(v.bank, v.floor, index)
}

// talkTick is how often the floor moves on: one audio frame.
const talkTick = 20 * time.Millisecond

// talk moves the floor on until stop, among the clients that have joined.
func (v *voiceRun) talk(stop <-chan struct{}, r *run) {
	t := time.NewTicker(talkTick)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			r.mu.Lock()
			joined := r.nParts + r.nPubs
			r.mu.Unlock()
			v.floor.Advance(time.Since(r.start), joined)
		}
	}
}

// joinParticipant joins audio bridge participant i; the first plan.AudioBridge.Decode of them
// decode the mix.
func (r *run) joinParticipant(ctx context.Context, i int) {
	var listener *client.Listener
	if i < r.plan.AudioBridge.Decode {
		var err error
		floor := r.voice.floor
		if listener, err = client.NewListener(func(now time.Duration) voice.Expectation { return floor.Expect(i, now) }); err != nil {
			r.fail(err)
			return
		}
	}
	p, err := client.JoinParticipant(ctx, r.env, i, r.voice.source(i), listener)
	if err != nil {
		r.fail(err)
		return
	}
	r.mu.Lock()
	r.parts[i] = p
	r.nParts++
	r.mu.Unlock()
}

// collectParticipants adds the audio bridge participants to the result: what each sent, its mix
// as a subscription of one stream, and what the listeners heard. The caller holds r.mu.
func (r *run) collectParticipants(res *report.Result, now time.Duration) {
	var heard client.ListenCounts
	listening := &res.Totals.Listening
	for _, p := range r.parts {
		if p == nil {
			continue
		}
		st := p.Sent()
		res.Publishers = append(res.Publishers, report.Publisher{Index: p.Index, Packets: st.Packets, Bytes: st.Bytes, LateSkips: st.Late, SendErrors: st.Errors})
		res.Subscriptions = append(res.Subscriptions, report.Subscription{Index: p.Index, Owner: p.Index, Expected: 1})
		res.Streams = append(res.Streams, report.Stream{Subscription: p.Index, Owner: p.Index, Feed: -1, Mid: "mix", Summary: p.Mix().Summarize(now)})
		if l := p.Listener(); l != nil {
			listening.Listeners++
			c := l.Counts()
			heard.Decoded += c.Decoded
			heard.Errors += c.Errors
			heard.SpeechFrames += c.SpeechFrames
			heard.Audible += c.Audible
			heard.SpeechDBSum += c.SpeechDBSum
			heard.SilenceFrames += c.SilenceFrames
			heard.SilenceAudible += c.SilenceAudible
			heard.SilenceDBSum += c.SilenceDBSum
		}
	}
	listening.Decoded, listening.DecodeErrors = heard.Decoded, heard.Errors
	listening.SpeechFrames, listening.SilenceFrames = heard.SpeechFrames, heard.SilenceFrames
	if heard.SpeechFrames > 0 {
		listening.SpeechMeanDBov = heard.SpeechDBSum / float64(heard.SpeechFrames)
		listening.SpeechAudible = float64(heard.Audible) / float64(heard.SpeechFrames)
	}
	if heard.SilenceFrames > 0 {
		listening.SilenceDBov = heard.SilenceDBSum / float64(heard.SilenceFrames)
		listening.SilenceAudible = float64(heard.SilenceAudible) / float64(heard.SilenceFrames)
	}
}

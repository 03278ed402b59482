package plan

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// SamplingRates are the audio bridge's mixing rates (Janus's sampling_rate).
var SamplingRates = []int{8000, 12000, 16000, 24000, 48000}

// Validate checks every field and returns all problems at once.
func (p *Plan) Validate() error {
	v := &validation{}
	if len(p.Servers) == 0 {
		if err := checkServer(p.Server); err != nil {
			v.bad("server", "%v", err)
		}
	}
	p.validateCluster(v)
	if p.Room == 0 {
		v.bad("room", "must be a positive room id")
	}
	if p.IsAudioBridge() && p.Streaming.Viewers != 0 {
		v.bad("streaming", "a plan has audio bridge participants or streaming viewers, not both")
	}
	if (p.IsAudioBridge() || p.IsStreaming()) && p.SIP.Calls != 0 {
		v.bad("sip", "a plan has SIP callers, audio bridge participants or streaming viewers, not several")
	}
	switch {
	case p.IsAudioBridge() || p.AudioBridge.Participants < 0:
		p.validateAudioBridge(v)
	case p.IsStreaming() || p.Streaming.Viewers < 0:
		p.validateStreaming(v)
	case p.IsSIP() || p.SIP.Calls < 0:
		p.validateSIP(v)
	default:
		p.validateVideoroom(v)
	}
	if !(p.JoinRate > 0) || p.JoinRate > MaxJoinRate {
		v.bad("join_rate", "%v is outside (0, %d] clients per second", p.JoinRate, MaxJoinRate)
	}
	if p.Duration <= 0 || p.Duration > MaxDuration {
		v.bad("duration", "%v is outside (0, %v]", p.Duration, MaxDuration)
	}
	if p.Warmup < 0 || p.Warmup >= p.Duration {
		v.bad("warmup", "%v must be at least 0 and shorter than the duration (%v)", p.Warmup, p.Duration)
	}
	if p.JoinTimeout <= 0 {
		v.bad("join_timeout", "must be positive")
	}
	if !slices.Contains(Profiles, p.Media) {
		v.bad("media", "%q is not one of %s", p.Media, strings.Join(Profiles, ", "))
	}
	if p.Receiver != ReceiverLight && p.Receiver != ReceiverFull {
		v.bad("receiver", "%q is not %s or %s", p.Receiver, ReceiverLight, ReceiverFull)
	}
	if p.Substream < -1 || p.Substream > 2 {
		v.bad("substream", "%d is outside -1…2", p.Substream)
	}
	if p.Substream >= 0 && p.Media != MediaSimulcast {
		v.bad("substream", "only applies to the %s media profile", MediaSimulcast)
	}
	if p.Talkers < 0 || p.Talkers > MaxClients {
		v.bad("talkers", "%d is outside 0…%d", p.Talkers, MaxClients)
	}
	p.Steps.validate(v)
	return errors.Join(v.errs...)
}

type validation struct{ errs []error }

func (v *validation) bad(field, format string, args ...any) {
	v.errs = append(v.errs, fmt.Errorf("plan: %s: %s", field, fmt.Sprintf(format, args...)))
}

func (p *Plan) validateVideoroom(v *validation) {
	if p.Publishers < 0 || p.Publishers > MaxClients {
		v.bad("publishers", "%d is outside 0…%d", p.Publishers, MaxClients)
	}
	if p.Subscribers < 0 || p.Subscribers > MaxClients {
		v.bad("subscribers", "%d is outside 0…%d", p.Subscribers, MaxClients)
	}
	if p.Publishers+p.Subscribers == 0 {
		v.bad("publishers", "a run needs at least one client (publishers, subscribers or audiobridge participants)")
	}
	if p.Subscribers > 0 && p.Publishers == 0 {
		v.bad("subscribers", "subscribers need at least one publisher")
	}
	for _, i := range p.SubscribeTo {
		if i < 0 || i >= p.Publishers {
			v.bad("subscribe_to", "publisher %d does not exist (there are %d)", i, p.Publishers)
		}
	}
}

func (p *Plan) validateAudioBridge(v *validation) {
	ab := p.AudioBridge
	if ab.Participants < 1 || ab.Participants > MaxClients {
		v.bad("audiobridge.participants", "%d is outside 1…%d", ab.Participants, MaxClients)
	}
	if p.Publishers != 0 || p.Subscribers != 0 || p.PublishersSubscribe || len(p.SubscribeTo) > 0 {
		v.bad("audiobridge", "audio bridge participants replace videoroom publishers and subscribers: "+
			"publishers, subscribers, publishers_subscribe and subscribe_to must be unset (have %d, %d, %v, %v)",
			p.Publishers, p.Subscribers, p.PublishersSubscribe, p.SubscribeTo)
	}
	if p.Media != MediaVoice {
		v.bad("media", "audio bridge participants send %s, not %q", MediaVoice, p.Media)
	}
	if !slices.Contains(SamplingRates, ab.SamplingRate) {
		v.bad("audiobridge.sampling_rate", "%d is not one of %v", ab.SamplingRate, SamplingRates)
	}
	if ab.Decode < 0 {
		v.bad("audiobridge.decode", "%d is negative", ab.Decode)
	}
}

func (p *Plan) validateStreaming(v *validation) {
	if n := p.Streaming.Viewers; n < 1 || n > MaxClients {
		v.bad("streaming.viewers", "%d is outside 1…%d", n, MaxClients)
	}
	if p.Publishers != 0 || p.Subscribers != 0 || p.PublishersSubscribe || len(p.SubscribeTo) > 0 {
		v.bad("streaming", "streaming viewers replace videoroom publishers and subscribers: "+
			"publishers, subscribers, publishers_subscribe and subscribe_to must be unset (have %d, %d, %v, %v)",
			p.Publishers, p.Subscribers, p.PublishersSubscribe, p.SubscribeTo)
	}
	if !slices.Contains([]string{MediaHD, MediaVideo, MediaAudio}, p.Media) {
		v.bad("media", "a streaming mountpoint carries %s, %s or %s, not %q", MediaHD, MediaVideo, MediaAudio, p.Media)
	}
}

func (s Steps) validate(v *validation) {
	if s.Size < 0 || s.Size > MaxClients {
		v.bad("steps.size", "%d is outside 0…%d", s.Size, MaxClients)
	}
	if s.Size == 0 {
		if s.StopWhenBehind {
			v.bad("steps.stop_when_behind", "needs steps (steps.size)")
		}
		return
	}
	if s.Hold <= 0 || s.Hold > MaxDuration {
		v.bad("steps.hold", "%v is outside (0, %v]", s.Hold, MaxDuration)
	}
	if s.Settle < 0 || s.Settle >= s.Hold {
		v.bad("steps.settle", "%v must be at least 0 and shorter than the hold (%v)", s.Settle, s.Hold)
	}
	for name, f := range map[string]float64{"steps.max_late": s.MaxLate, "steps.max_loss": s.MaxLoss} {
		if !(f >= 0 && f <= 1) {
			v.bad(name, "%v is outside 0…1 (a share of the frames)", f)
		}
	}
}

// StepCount is how many steps the run has (1 without steps).
func (p *Plan) StepCount() int {
	if p.Steps.Size <= 0 {
		return 1
	}
	return (p.Participants() + p.Steps.Size - 1) / p.Steps.Size
}

// RampTime is how long the joins take at the plan's join rate, step holds included.
func (p *Plan) RampTime() time.Duration {
	t := time.Duration(float64(p.Participants()) / p.JoinRate * float64(time.Second))
	if p.Steps.Size > 0 {
		t += time.Duration(p.StepCount()) * p.Steps.Hold
	}
	return t
}

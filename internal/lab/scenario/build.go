package scenario

import (
	"fmt"

	"github.com/strata-rtc/strata/internal/sim"
)

// Build creates the simulation of s with the given seed. Flows with a
// start jitter start at a uniformly random offset in [0, jitter) drawn from
// their own seeded generator.
func (s *Scenario) Build(seed uint64) (*sim.Sim, error) {
	sm := sim.New(sim.Config{Seed: seed, Duration: s.Duration, Interval: s.Interval})
	for _, l := range s.Links {
		if _, err := sm.AddLink(l.LinkConfig); err != nil {
			return nil, err
		}
	}
	for _, f := range s.Flows {
		if err := addFlow(sm, seed, f); err != nil {
			return nil, fmt.Errorf("flow %s: %w", f.Name, err)
		}
	}
	if s.SFU != nil {
		if err := s.buildSFU(sm); err != nil {
			return nil, fmt.Errorf("sfu: %w", err)
		}
	}
	return sm, nil
}

// NeedsEmulation says why the simulator cannot run s (nil if it can): a browser flow, a flow
// with codec model libvpx, or a session with a browser subscriber, which only the emulation
// engine runs.
func (s *Scenario) NeedsEmulation() error {
	for _, f := range s.Flows {
		if f.Kind == KindBrowser {
			return fmt.Errorf("flow %s: %w", f.Name, ErrBrowserNeedsEmulation)
		}
		if err := f.Codec.Simulated(); err != nil {
			return fmt.Errorf("flow %s: %w", f.Name, err)
		}
	}
	if s.SFU != nil {
		if err := s.SFU.NeedsEmulation(); err != nil {
			return fmt.Errorf("sfu: %w", err)
		}
	}
	return nil
}

func addFlow(sm *sim.Sim, seed uint64, f Flow) error {
	if f.Kind == KindBrowser {
		return ErrBrowserNeedsEmulation
	}
	if err := f.Codec.Simulated(); err != nil {
		return err
	}
	fwd, err := sm.Path(f.Path)
	if err != nil {
		return err
	}
	start := f.StartAt(seed)
	if f.Kind == KindCBR {
		_, err := sim.NewCBRFlow(sm, sim.CBRConfig{Name: f.Name, Forward: fwd, Start: start, Stop: f.Stop,
			Rate: f.Rate, PacketSize: f.PacketSize})
		return err
	}
	rev, err := sm.Path(f.ReversePath)
	if err != nil {
		return err
	}
	info, ok := sim.LookupController(f.CC)
	if !ok {
		return fmt.Errorf("unknown controller %q", f.CC)
	}
	mss := f.MSS
	if mss == 0 {
		mss = 1448
	}
	ctl, err := info.Build(f.Params, mss)
	if err != nil {
		return err
	}
	switch f.Kind {
	case KindMedia:
		_, err = sim.NewMediaFlow(sm, sim.MediaConfig{Name: f.Name, CC: f.CC, Forward: fwd, Reverse: rev,
			Start: start, Stop: f.Stop, Pauses: f.Pauses, Codec: f.Codec, PacketSize: f.PacketSize,
			FeedbackInterval: f.Feedback, ECN: f.ECN, Controller: ctl.Rate, Receiver: ctl.Rx})
	default:
		_, err = sim.NewTCPFlow(sm, sim.TCPConfig{Name: f.Name, Kind: f.Kind, CC: f.CC, Forward: fwd, Reverse: rev,
			Start: start, Stop: f.Stop, MSS: mss, DelayedAck: f.DelayedAck, ECN: f.ECN, OnOff: f.OnOff,
			NoSACK: f.NoSACK, RcvWindow: f.RcvWindow,
			Controller: ctl.Window})
	}
	return err
}

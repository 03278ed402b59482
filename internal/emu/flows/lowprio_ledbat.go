package flows

import (
	"context"
	"errors"

	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/internal/emu/endpoint"
)

// Placeholder until branch dc (internal/lowprio/dc) is merged.
var errNoBinding = errors.New("LEDBAT data-channel transfers need internal/lowprio/dc")

const ledbatStream = int64(1) << 40

func ledbatChannel() (string, *webrtc.DataChannelInit) {
	ordered, retransmits := false, uint16(0)
	return "lowprio:put:gen:0", &webrtc.DataChannelInit{Ordered: &ordered, MaxRetransmits: &retransmits}
}

func (f *LowPrio) ledbatOptions(bool) struct{} { return struct{}{} }

func (f *LowPrio) sendLEDBAT(context.Context, *webrtc.DataChannel) error    { return errNoBinding }
func (f *LowPrio) receiveLEDBAT(context.Context, *webrtc.DataChannel) error { return errNoBinding }

func receiveLEDBAT(context.Context, *webrtc.DataChannel, endpoint.Recorder, struct{}) error {
	return errNoBinding
}

func endErr(_ string, _ context.Context, err error) error { return err }

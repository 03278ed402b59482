package flows

import (
	"context"
	"errors"

	"github.com/pion/webrtc/v4"
)

// errNoBinding stands in until the Pion binding of internal/lowprio is merged.
var errNoBinding = errors.New("LEDBAT data-channel transfers need internal/lowprio/dc")

func ledbatChannel() (string, *webrtc.DataChannelInit) {
	ordered, retransmits := false, uint16(0)
	return "lowprio:put:gen:0", &webrtc.DataChannelInit{Ordered: &ordered, MaxRetransmits: &retransmits}
}

func (f *LowPrio) sendLEDBAT(context.Context, *webrtc.DataChannel) error    { return errNoBinding }
func (f *LowPrio) receiveLEDBAT(context.Context, *webrtc.DataChannel) error { return errNoBinding }

func newBrowserLowPrio(f *LowPrio) (*LowPrio, error) { return nil, errors.New("browser endpoint: not yet") }

package dc

import (
	"time"

	"github.com/strata-rtc/strata/cc"
	"github.com/strata-rtc/strata/cc/ledbat"
	"github.com/strata-rtc/strata/internal/lowprio"
)

// Variants of the sender's controller (lowprio's, named here for the binding's users).
const (
	VariantLEDBAT     = lowprio.VariantLEDBAT
	VariantLEDBATPlus = lowprio.VariantLEDBATPlus
)

// MinCap is the lowest rate a Cap function can impose: when the media leaves nothing, the
// transfer still sends a message now and then, so it keeps measuring the path and its peer's
// idle timer does not fire.
const MinCap = 16 * cc.Kbps

// Options configure one transfer. The zero value is RFC 6817 LEDBAT with lowprio's defaults.
type Options struct {
	// Variant is the sender's controller: VariantLEDBAT ("" too) or VariantLEDBATPlus.
	Variant string
	// Target is the controller's target queuing delay (0: the variant's, 100 or 60 ms).
	Target time.Duration
	// Config is the protocol's configuration; its Transfer id is always 1 (one transfer per
	// channel). Both ends must agree on MaxMessage.
	Config lowprio.Config
	// Cap, when set, is polled every CapInterval for an external rate cap on the sender (the
	// server's max(0, estimate − media rate)); results below MinCap count as MinCap.
	Cap func() cc.Bitrate
	// Progress, when set, is called every ProgressInterval and once at the end, on the transfer's
	// goroutine: it must return quickly.
	Progress func(Progress)
	// ProgressInterval is how often Progress is called (250 ms).
	ProgressInterval time.Duration
	// Linger is how long a receiver that read the whole stream keeps acknowledging a repeated
	// FIN while it waits for the sender to close the channel (2 s).
	Linger time.Duration
}

// Defaults of Options.
const (
	DefaultProgressInterval = 250 * time.Millisecond
	DefaultLinger           = 2 * time.Second
	// CapInterval is how often Options.Cap is polled.
	CapInterval = 25 * time.Millisecond
)

// CheckVariant reports an unknown variant.
func CheckVariant(v string) error { return lowprio.CheckVariant(v) }

// config returns the protocol configuration: transfer id 1, defaults filled in by lowprio.
func (o *Options) config() lowprio.Config {
	c := o.Config
	c.Transfer = 1
	if c.MaxMessage <= lowprio.DataHeader {
		c.MaxMessage = lowprio.DefaultConfig().MaxMessage
	}
	return c
}

// controller builds the sender's LEDBAT controller with the message size as MSS.
func (o *Options) controller() (*ledbat.Controller, error) {
	return lowprio.NewController(o.Variant, o.Target, o.config().MaxMessage)
}

func (o *Options) progressInterval() time.Duration {
	if o.ProgressInterval > 0 {
		return o.ProgressInterval
	}
	return DefaultProgressInterval
}

func (o *Options) linger() time.Duration {
	if o.Linger > 0 {
		return o.Linger
	}
	return DefaultLinger
}

// Progress is a transfer's state, for a progress display and the lab's samples.
type Progress struct {
	Elapsed time.Duration
	// Bytes is the stream's bytes acknowledged in order (sender) or received in order (receiver).
	Bytes uint64
	// Rate is Bytes' growth over the last interval.
	Rate cc.Bitrate
	// The sender's view (zero on a receiver): smoothed RTT, LEDBAT's queuing-delay estimate (the
	// one-way delay above the base), congestion window and bytes in flight.
	RTT        time.Duration
	QueueDelay time.Duration
	Cwnd       int
	InFlight   int
	Done       bool // the last call: the transfer ended (see the returned error)
}

// Stats summarise a finished transfer.
type Stats struct {
	Bytes       uint64 // the stream's length (or the bytes moved in order before an error)
	Elapsed     time.Duration
	Retransmits int // sender: messages sent again
	Timeouts    int // sender: retransmission timeouts
	Dropped     int // messages dropped because the transfer's goroutine fell behind
}

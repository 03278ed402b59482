package lowprio

import (
	"errors"
	"fmt"
	"time"
)

// Config holds a transfer endpoint's parameters. Zero fields take the defaults.
type Config struct {
	// Transfer is the transfer id carried in every message.
	Transfer uint32
	// MaxMessage bounds a message's size in bytes (1100, so SCTP never fragments it).
	MaxMessage int
	// SendBuffer bounds the bytes Write accepts and keeps until they are acknowledged (256 KiB).
	SendBuffer int
	// RecvBuffer is the receiver's reassembly buffer, which is also its receive window (256 KiB).
	RecvBuffer int
	// InitialWindow is the peer window a sender assumes before the first ACK (64 KiB); it must
	// not exceed the peer's RecvBuffer.
	InitialWindow int
	// AckDelay is the longest an in-order DATA waits for its ACK (10 ms).
	AckDelay time.Duration
	// IdleTimeout ends a transfer whose peer sent nothing for this long while data is
	// outstanding (30 s).
	IdleTimeout time.Duration
	// MinRTO is the retransmission timeout's lower bound (RFC 6298: 1 s; 200 ms by default here
	// as in Linux, since a data channel has no delayed acks beyond AckDelay).
	MinRTO time.Duration
}

// DefaultConfig returns the defaults.
func DefaultConfig() Config {
	return Config{
		MaxMessage:    1100,
		SendBuffer:    256 << 10,
		RecvBuffer:    256 << 10,
		InitialWindow: 64 << 10,
		AckDelay:      10 * time.Millisecond,
		IdleTimeout:   30 * time.Second,
		MinRTO:        200 * time.Millisecond,
	}
}

func (c Config) withDefaults() Config {
	d := DefaultConfig()
	d.Transfer = c.Transfer
	if c.MaxMessage > DataHeader {
		d.MaxMessage = c.MaxMessage
	}
	if c.SendBuffer > 0 {
		d.SendBuffer = c.SendBuffer
	}
	if c.RecvBuffer > 0 {
		d.RecvBuffer = c.RecvBuffer
	}
	if c.InitialWindow > 0 {
		d.InitialWindow = c.InitialWindow
	}
	if c.AckDelay > 0 {
		d.AckDelay = c.AckDelay
	}
	if c.IdleTimeout > 0 {
		d.IdleTimeout = c.IdleTimeout
	}
	if c.MinRTO > 0 {
		d.MinRTO = c.MinRTO
	}
	return d
}

// RESET codes.
const (
	CodeProtocol    = 1 // a malformed, forged or impossible message
	CodeIdleTimeout = 2 // the peer went silent
	CodeAbort       = 3 // the application gave up
)

// Errors a transfer ends with.
var (
	ErrForgedAck     = errors.New("lowprio: ACK for data never sent")
	ErrImpossible    = errors.New("lowprio: DATA outside the receive window or past the end of the stream")
	ErrIdleTimeout   = errors.New("lowprio: peer idle timeout")
	ErrTooLong       = errors.New("lowprio: stream longer than the sequence space")
	ErrWrongTransfer = errors.New("lowprio: message for another transfer")
	ErrUnexpected    = errors.New("lowprio: message type not for this endpoint")
)

// ResetError is a RESET: one received from the peer, or the application's own Abort.
type ResetError struct {
	Code   uint16
	Reason string
}

func (e *ResetError) Error() string {
	return fmt.Sprintf("lowprio: transfer reset (code %d): %q", e.Code, e.Reason) // quoted: the peer chose it
}

// encodeReset encodes the RESET for the error that ended a transfer: the peer's or the
// application's own code, the idle timeout's, or a protocol error's.
func encodeReset(buf []byte, id uint32, err error) []byte {
	code, reason := uint16(CodeProtocol), err.Error()
	var re *ResetError
	if errors.As(err, &re) {
		code, reason = re.Code, re.Reason // the application's own words, not this side's wrapping
	} else if errors.Is(err, ErrIdleTimeout) {
		code = CodeIdleTimeout
	}
	b, _ := EncodeReset(buf, id, code, reason)
	return b
}

// ts is the wire timestamp of now: microseconds, low 32 bits.
func ts(now time.Duration) uint32 { return uint32(now / time.Microsecond) }

// since is now minus a wire timestamp of the same clock, or −1 when the timestamp is ahead.
func since(now time.Duration, t uint32) time.Duration {
	d := int32(ts(now) - t)
	if d < 0 {
		return -1
	}
	return time.Duration(d) * time.Microsecond
}

// Package dc binds the low-priority transfer protocol (internal/lowprio) to Pion data channels:
// one unordered, unreliable data channel per transfer, labelled "lowprio:<verb>:<name>", driven
// by one goroutine that feeds the channel's messages to a lowprio.Sender or Receiver, sleeps
// until the deadline Poll returns, and keeps the channel's bufferedAmount near zero so the
// protocol's timestamps see the path, not a queue inside SCTP (docs/LOWPRIO.md).
package dc

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/pion/webrtc/v4"
)

// Protocol is the data channel's subprotocol.
const Protocol = "strata-lp/1"

// Verbs: the opener of a "get" channel receives the named stream; the opener of a "put" channel
// sends it.
const (
	VerbGet = "get"
	VerbPut = "put"
)

// LabelPrefix starts every low-priority channel's label.
const LabelPrefix = "lowprio:"

// MaxName bounds a transfer's name in bytes.
const MaxName = 200

// GenPrefix names a generated stream: "gen:<bytes>" (see Generated).
const GenPrefix = "gen:"

// Errors of labels and names.
var (
	ErrLabel = errors.New("lowprio: not a low-priority channel label")
	ErrName  = errors.New("lowprio: bad transfer name")
)

// Label returns the label of a channel that transfers name with verb (VerbGet or VerbPut).
func Label(verb, name string) string { return LabelPrefix + verb + ":" + name }

// ParseLabel splits a label into verb and name, checking both (CheckName).
func ParseLabel(label string) (verb, name string, err error) {
	rest, ok := strings.CutPrefix(label, LabelPrefix)
	if !ok {
		return "", "", fmt.Errorf("%w: %q", ErrLabel, label)
	}
	verb, name, ok = strings.Cut(rest, ":")
	if !ok || (verb != VerbGet && verb != VerbPut) {
		return "", "", fmt.Errorf("%w: %q: the verb must be %q or %q", ErrLabel, label, VerbGet, VerbPut)
	}
	if err := CheckName(name); err != nil {
		return "", "", err
	}
	return verb, name, nil
}

// CheckName reports whether name may name a transfer: 1 to MaxName bytes of UTF-8, no NUL, not
// starting with "/", and no ".." path element, so a serving side can join it to a directory.
func CheckName(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("%w: empty", ErrName)
	case len(name) > MaxName:
		return fmt.Errorf("%w: %d bytes, at most %d", ErrName, len(name), MaxName)
	case !utf8.ValidString(name):
		return fmt.Errorf("%w: not UTF-8", ErrName)
	case strings.IndexByte(name, 0) >= 0:
		return fmt.Errorf("%w: contains NUL", ErrName)
	case strings.HasPrefix(name, "/"):
		return fmt.Errorf("%w: %q starts with /", ErrName, name)
	}
	for _, el := range strings.Split(name, "/") {
		if el == ".." {
			return fmt.Errorf("%w: %q has a .. element", ErrName, name)
		}
	}
	return nil
}

// maxGenerated bounds a generated stream (1 PB): far beyond any test, and below the protocol's
// offset limit.
const maxGenerated = 1 << 50

// ParseGenerated reports whether name is "gen:<bytes>" and the length it asks for.
func ParseGenerated(name string) (n int64, ok bool, err error) {
	digits, ok := strings.CutPrefix(name, GenPrefix)
	if !ok {
		return 0, false, nil
	}
	n, err = strconv.ParseInt(digits, 10, 64)
	if err != nil || n < 0 || n > maxGenerated {
		return 0, true, fmt.Errorf("%w: %q: want %s<bytes> with 0 ≤ bytes ≤ %d", ErrName, name, GenPrefix, int64(maxGenerated))
	}
	return n, true, nil
}

// MaxRetransmits is the channel's SCTP retransmission limit. Not 0: Pion's SCTP (v1.11) marks a
// message of a maxRetransmits 0 stream abandoned as it first sends it, and then answers every
// SACK with a FORWARD-TSN that the receiver answers with another SACK, a ping-pong that grows
// with the traffic and took 30 to 60% of a 2 Mbit/s link in the namespace test (pion/sctp#505).
// With 2, a message is abandoned only when SCTP would retransmit it (Pion retransmits it once,
// browsers up to twice), and the protocol's own retransmission does the rest.
const MaxRetransmits = 2

// Init returns the options of a low-priority channel: unordered, so SCTP never holds a message
// back behind a lost one, with at most MaxRetransmits retransmissions, and the Protocol.
func Init() *webrtc.DataChannelInit {
	ordered, retransmits, protocol := false, uint16(MaxRetransmits), Protocol
	return &webrtc.DataChannelInit{Ordered: &ordered, MaxRetransmits: &retransmits, Protocol: &protocol}
}

package cluster

import (
	"encoding/json"
	"errors"
	"fmt"
	"sync"
)

// MaxEnvelope bounds an envelope on a topic: events are small (a join, a feed descriptor); a
// larger message is malformed, whoever sent it.
const MaxEnvelope = 256 << 10

// DecodeEnvelope parses a message received on topic's channel. Messages on the engine's
// channels are remote input (any node, or anyone with access to Redis, can publish there): a
// message that is not a well-formed envelope for this topic is an error, never a panic.
func DecodeEnvelope(topic string, payload []byte) (Envelope, error) {
	var env Envelope
	if len(payload) > MaxEnvelope {
		return env, fmt.Errorf("envelope of %d bytes exceeds %d", len(payload), MaxEnvelope)
	}
	if err := json.Unmarshal(payload, &env); err != nil {
		return Envelope{}, fmt.Errorf("envelope: %w", err)
	}
	switch {
	case env.Topic != topic:
		return Envelope{}, fmt.Errorf("envelope for topic %q on topic %q", truncate(env.Topic), truncate(topic))
	case env.From == "":
		return Envelope{}, errors.New("envelope without sender")
	case env.Seq == 0:
		return Envelope{}, errors.New("envelope without sequence number")
	case env.Kind == "":
		return Envelope{}, errors.New("envelope without kind")
	}
	return env, nil
}

// truncate keeps remote strings in error messages short.
func truncate(s string) string {
	const max = 64
	if len(s) > max {
		return s[:max] + "…"
	}
	return s
}

// topicSeq numbers this node's envelopes on one topic; mu also serialises their publication, so
// that the engine sends them in the order of their numbers.
type topicSeq struct {
	mu  sync.Mutex
	seq uint64
}

// senderState is what a subscriber knows of one sender on a topic.
type senderState struct {
	epoch, seq uint64
}

// sequencer puts one subscriber's envelopes in order per sender. It is pure: the subscriber's
// goroutine feeds it and acts on what it says.
type sequencer struct {
	senders map[string]senderState
	// afterGap: the subscription was re-established, so even a sender heard of for the first
	// time may have sent messages that were lost.
	afterGap bool
}

// verdict says what to do with an envelope.
type verdict int

const (
	deliver       verdict = iota // in order
	gapAndDeliver                // something was lost before it: resynchronise, then take it
	drop                         // a duplicate or an old one
)

func (s *sequencer) admit(env Envelope) verdict {
	if s.senders == nil {
		s.senders = make(map[string]senderState)
	}
	st, known := s.senders[env.From]
	s.senders[env.From] = senderState{epoch: env.Epoch, seq: env.Seq}
	switch {
	case !known:
		if s.afterGap && env.Seq > 1 {
			return gapAndDeliver
		}
		return deliver
	case env.Epoch != st.epoch:
		return gapAndDeliver
	case env.Seq == st.seq+1:
		return deliver
	case env.Seq > st.seq+1:
		return gapAndDeliver
	case env.Seq == 1:
		// The sender restarted (its numbers start again).
		return gapAndDeliver
	default:
		s.senders[env.From] = st
		return drop
	}
}

// reset forgets every sender after a lost subscription and returns them: each gets a gap.
func (s *sequencer) reset() []string {
	out := make([]string, 0, len(s.senders))
	for from := range s.senders {
		out = append(out, from)
	}
	clear(s.senders)
	s.afterGap = true
	return out
}

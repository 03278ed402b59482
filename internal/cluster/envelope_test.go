package cluster

import (
	"encoding/json"
	"testing"
)

func TestSequencer(t *testing.T) {
	var s sequencer
	env := func(from string, epoch, seq uint64) Envelope {
		return Envelope{Topic: "t", From: from, Epoch: epoch, Seq: seq, Kind: "k"}
	}
	steps := []struct {
		env  Envelope
		want verdict
	}{
		{env("a", 1, 5), deliver},       // first heard of: whatever its number
		{env("a", 1, 6), deliver},       // next
		{env("a", 1, 6), drop},          // duplicate
		{env("a", 1, 4), drop},          // old
		{env("a", 1, 8), gapAndDeliver}, // 7 lost
		{env("b", 0, 1), deliver},       // another sender, its own numbers
		{env("a", 2, 9), gapAndDeliver}, // new epoch
		{env("a", 2, 1), gapAndDeliver}, // the sender restarted
		{env("a", 2, 2), deliver},
	}
	for i, st := range steps {
		if got := s.admit(st.env); got != st.want {
			t.Fatalf("step %d %+v: %v, want %v", i, st.env, got, st.want)
		}
	}
	lost := s.reset()
	if len(lost) != 2 {
		t.Fatalf("reset: %v", lost)
	}
	// After a lost subscription, a sender heard of for the first time past its first number
	// may have sent what was lost.
	if got := s.admit(env("c", 0, 3)); got != gapAndDeliver {
		t.Fatalf("unknown sender after reset: %v", got)
	}
	if got := s.admit(env("d", 0, 1)); got != deliver {
		t.Fatalf("new sender after reset: %v", got)
	}
}

func FuzzDecodeEnvelope(f *testing.F) {
	good, _ := json.Marshal(Envelope{Topic: "room/1", From: "n1", Epoch: 2, Seq: 3, Kind: "joined", Body: json.RawMessage(`{"id":1}`)})
	for _, s := range []string{string(good), "", "{}", "null", `{"topic":"room/1","from":"n1","seq":1,"kind":"k","body":nul}`,
		`{"topic":"room/1","from":"n1","seq":18446744073709551616,"kind":"k"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		env, err := DecodeEnvelope("room/1", b)
		if err != nil {
			if env.From != "" || env.Seq != 0 || env.Body != nil {
				t.Fatalf("error with a non-empty envelope: %+v", env)
			}
			return
		}
		if env.Topic != "room/1" || env.From == "" || env.Seq == 0 || env.Kind == "" {
			t.Fatalf("accepted an invalid envelope: %+v", env)
		}
		// What was accepted encodes and decodes to the same.
		again, _ := json.Marshal(env)
		back, err := DecodeEnvelope("room/1", again)
		if err != nil || back.From != env.From || back.Seq != env.Seq || back.Epoch != env.Epoch || back.Kind != env.Kind {
			t.Fatalf("round trip: %+v -> %+v %v", env, back, err)
		}
		var s sequencer
		s.admit(env)
	})
}

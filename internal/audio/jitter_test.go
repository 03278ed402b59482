package audio

import (
	"bytes"
	"testing"
)

const opusFrameTS = 960

func pkt(seq uint16) []byte { return []byte{byte(seq), byte(seq >> 8), 0xAB} }

// pushAll pushes seqs (timestamps following the sequence numbers) and fails on a refusal.
func pushAll(t *testing.T, j *Jitter, seqs ...uint16) {
	t.Helper()
	for _, s := range seqs {
		if r := j.Push(s, uint32(s)*opusFrameTS, pkt(s)); r != Queued {
			t.Fatalf("push %d: %v", s, r)
		}
	}
}

func wantPacket(t *testing.T, f Frame, seq uint16) {
	t.Helper()
	if f.Kind != Packet || f.Seq != seq || !bytes.Equal(f.Payload, pkt(seq)) {
		t.Fatalf("want packet %d, got kind %d seq %d payload %x", seq, f.Kind, f.Seq, f.Payload)
	}
}

func TestJitterPrebuffersThenPlaysInOrder(t *testing.T) {
	j := NewJitter(3, opusFrameTS)
	pushAll(t, j, 10, 12, 11)
	if f := j.Pull(); f.Kind != NoFrame || !j.Prebuffering() {
		t.Fatalf("3 packets with prebuffer 3 must still be prebuffering (Janus waits for more than prebuffer), got %d", f.Kind)
	}
	pushAll(t, j, 13)
	for s := uint16(10); s <= 13; s++ {
		wantPacket(t, j.Pull(), s)
	}
	if f := j.Pull(); f.Kind != NoFrame || !j.Prebuffering() {
		t.Fatalf("drained buffer must go back to prebuffering, got %d", f.Kind)
	}
	if st := j.Stats(); st.Played != 4 || st.Underruns != 1 || st.Lost != 0 {
		t.Fatalf("stats %+v", st)
	}
}

func TestJitterReordersAcrossWrap(t *testing.T) {
	j := NewJitter(3, opusFrameTS)
	pushAll(t, j, 65534, 0, 65535, 1)
	for _, s := range []uint16{65534, 65535, 0, 1} {
		wantPacket(t, j.Pull(), s)
	}
}

func TestJitterReorderBeforePlayoutIsNotLate(t *testing.T) {
	j := NewJitter(2, opusFrameTS)
	pushAll(t, j, 21, 20, 22)
	wantPacket(t, j.Pull(), 20)
}

// After running dry, a late copy of a frame already played is not played again.
func TestJitterLateAfterUnderrunIsNotReplayed(t *testing.T) {
	j := NewJitter(1, opusFrameTS)
	pushAll(t, j, 1, 2)
	wantPacket(t, j.Pull(), 1)
	wantPacket(t, j.Pull(), 2)
	if f := j.Pull(); f.Kind != NoFrame {
		t.Fatalf("want underrun, got %+v", f)
	}
	if r := j.Push(2, 2*opusFrameTS, pkt(2)); r != Late {
		t.Fatalf("replayed frame 2: %v", r)
	}
	pushAll(t, j, 3, 4)
	wantPacket(t, j.Pull(), 3)
}

func TestJitterLossSignalsFECFromTheFollowingPacket(t *testing.T) {
	j := NewJitter(2, opusFrameTS)
	pushAll(t, j, 1, 2, 4) // 3 lost
	wantPacket(t, j.Pull(), 1)
	wantPacket(t, j.Pull(), 2)
	f := j.Pull()
	if f.Kind != Lost || f.Seq != 3 || f.TS != 3*opusFrameTS {
		t.Fatalf("want lost 3, got %+v", f)
	}
	if !bytes.Equal(f.FEC, pkt(4)) {
		t.Fatalf("lost frame 3 must come with packet 4 for FEC, got %x", f.FEC)
	}
	wantPacket(t, j.Pull(), 4)
	if st := j.Stats(); st.Lost != 1 {
		t.Fatalf("stats %+v", st)
	}
}

func TestJitterNoFECWhenTheNextPacketIsNotAdjacent(t *testing.T) {
	j := NewJitter(2, opusFrameTS)
	pushAll(t, j, 1, 2, 5) // 3 and 4 lost: 5's FEC covers 4, not 3
	j.Pull()
	j.Pull()
	if f := j.Pull(); f.Kind != Lost || f.FEC != nil {
		t.Fatalf("frame 3: want lost without FEC, got %+v", f)
	}
	if f := j.Pull(); f.Kind != Lost || !bytes.Equal(f.FEC, pkt(5)) {
		t.Fatalf("frame 4: want lost with 5's FEC, got %+v", f)
	}
	wantPacket(t, j.Pull(), 5)
}

func TestJitterTimestampGapIsNotLoss(t *testing.T) {
	j := NewJitter(1, opusFrameTS)
	j.Push(1, 1000, pkt(1))
	j.Push(2, 1000+20*opusFrameTS, pkt(2)) // DTX: consecutive sequence numbers, 400 ms apart
	wantPacket(t, j.Pull(), 1)
	wantPacket(t, j.Pull(), 2)
}

func TestJitterLateAndDuplicate(t *testing.T) {
	j := NewJitter(1, opusFrameTS)
	pushAll(t, j, 5, 6)
	wantPacket(t, j.Pull(), 5)
	if r := j.Push(5, 5*opusFrameTS, pkt(5)); r != Late {
		t.Fatalf("played packet again: %v", r)
	}
	if r := j.Push(6, 6*opusFrameTS, pkt(6)); r != Duplicate {
		t.Fatalf("queued packet again: %v", r)
	}
	if r := j.Push(7, 0, nil); r != Empty {
		t.Fatalf("empty payload: %v", r)
	}
	if r := j.Push(7, 0, make([]byte, MaxPacket+1)); r != TooLarge {
		t.Fatalf("oversized payload: %v", r)
	}
	if st := j.Stats(); st.Late != 1 || st.Duplicates != 1 || st.Invalid != 2 {
		t.Fatalf("stats %+v", st)
	}
}

// A participant sending twice as fast as the mix plays is trimmed back to prebuffer packets
// whenever twice that are queued, oldest first, and the latency stays bounded.
func TestJitterOverflowDropsOldest(t *testing.T) {
	j := NewJitter(DefaultPrebuffer, opusFrameTS)
	seq := uint16(100)
	for tick := 0; tick < 500; tick++ {
		pushAll(t, j, seq, seq+1)
		seq += 2
		j.Pull()
		if j.Len() >= 2*DefaultPrebuffer {
			t.Fatalf("tick %d: %d queued", tick, j.Len())
		}
	}
	st := j.Stats()
	if st.Overflow < 400 || st.Played < 450 {
		t.Fatalf("stats %+v", st)
	}
	// What plays is the newest audio, not audio from seconds ago.
	f := j.Pull()
	if f.Kind != Packet || seq-f.Seq > 2*DefaultPrebuffer {
		t.Fatalf("playing %d while the sender is at %d", f.Seq, seq)
	}
}

func TestJitterResyncOnRestartedStream(t *testing.T) {
	j := NewJitter(1, opusFrameTS)
	pushAll(t, j, 30000, 30001)
	wantPacket(t, j.Pull(), 30000)
	pushAll(t, j, 5, 6) // the sender restarted far back
	if st := j.Stats(); st.Resyncs != 1 {
		t.Fatalf("stats %+v", st)
	}
	wantPacket(t, j.Pull(), 5)
}

func TestJitterFarJumpAheadKeepsNewest(t *testing.T) {
	j := NewJitter(1, opusFrameTS)
	pushAll(t, j, 1, 2)
	wantPacket(t, j.Pull(), 1)
	pushAll(t, j, 20000, 20001)
	for i := 0; i < 3; i++ {
		if f := j.Pull(); f.Kind == Packet && f.Seq >= 20000 {
			return
		}
	}
	t.Fatal("the jumped-to stream did not play")
}

// Packets arrive on one goroutine while the mixer pulls on another (run with -race).
func TestInputPushAndNextConcurrently(t *testing.T) {
	f := Format{Rate: 16000, Channels: 1}
	in, err := NewInput(f, 2)
	if err != nil {
		t.Fatal(err)
	}
	pkts := toneFrames(t, upFormat, EncoderConfig{}, 500, 200)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i, p := range pkts {
			in.Push(uint16(i), uint32(i)*960, p)
		}
	}()
	frames := 0
	for i := 0; i < 400; i++ {
		if in.Next() != nil {
			frames++
		}
	}
	<-done
	for in.Next() != nil {
		frames++
	}
	st := in.Stats()
	if frames == 0 || st.Jitter.Queued != uint64(len(pkts)) || st.Corrupt != 0 {
		t.Fatalf("%d frames, stats %+v", frames, st)
	}
}

package client

import (
	"testing"
	"time"

	"github.com/pion/rtp"
)

// recorder keeps what an echoWriter passed on.
type recorder struct{ pkts [][]byte }

func (r *recorder) WriteRTP(p *rtp.Packet) error {
	b, err := p.Marshal()
	r.pkts = append(r.pkts, b)
	return err
}

// echoed is pkt as a server sends it back: another SSRC, sequence number and timestamp, an
// extension added, the payload untouched.
func echoed(t *testing.T, pkt []byte, seq uint16) []byte {
	t.Helper()
	var p rtp.Packet
	if err := p.Unmarshal(pkt); err != nil {
		t.Fatal(err)
	}
	p.SSRC, p.SequenceNumber, p.Timestamp = 0x1234, seq, uint32(seq)*960
	if err := p.SetExtension(1, []byte{0x90}); err != nil {
		t.Fatal(err)
	}
	b, err := p.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestEchoMatchesOwnPayloadsWhateverTheHeader(t *testing.T) {
	var e Echo
	rec := &recorder{}
	now := time.Duration(0)
	w := echoWriter{w: rec, echo: &e, now: func() time.Duration { return now }}
	for i := range 10 {
		now = time.Duration(i) * 20 * time.Millisecond
		if err := w.WriteRTP(&rtp.Packet{Header: rtp.Header{Version: 2, PayloadType: 111, SequenceNumber: uint16(i), SSRC: 7},
			Payload: []byte{byte(i), 0xfc, 0xff, byte(i * 3)}}); err != nil {
			t.Fatal(err)
		}
	}
	// Packets 2 and 9 come back 5 ms after 9 was sent; then one that was never sent.
	now += 5 * time.Millisecond
	e.Heard(echoed(t, rec.pkts[2], 100), now)
	e.Heard(echoed(t, rec.pkts[9], 101), now)
	e.Heard(echoed(t, append(append([]byte(nil), rec.pkts[9][:12]...), 1, 2, 3), 102), now)
	e.Heard([]byte{0x80}, now) // not RTP
	c := e.Counts()
	if c.Sent != 10 || c.Received != 4 || c.Matched != 2 {
		t.Fatalf("counts %+v, want 10 sent, 4 received, 2 matched", c)
	}
	if c.RTTMax != 145*time.Millisecond || c.RTTSum != 150*time.Millisecond || c.FirstMatch != now {
		t.Fatalf("round trips %+v: want max 145 ms (packet 2), sum 150 ms", c)
	}
}

func TestEchoForgetsOldPayloads(t *testing.T) {
	var e Echo
	first := []byte{1, 2, 3}
	e.Sent(first, 0)
	for i := range echoRing {
		e.Sent([]byte{9, byte(i), byte(i >> 8)}, time.Duration(i+1)*time.Millisecond)
	}
	pkt := append([]byte{0x80, 111, 0, 1, 0, 0, 0, 1, 0, 0, 0, 2}, first...)
	e.Heard(pkt, time.Second)
	if c := e.Counts(); c.Matched != 0 {
		t.Fatalf("a payload sent %d packets ago matched: %+v", echoRing+1, c)
	}
}

func TestEchoAllocatesNothing(t *testing.T) {
	var e Echo
	payload := []byte{1, 2, 3, 4}
	pkt := append([]byte{0x80, 111, 0, 1, 0, 0, 0, 1, 0, 0, 0, 2}, payload...)
	if n := testing.AllocsPerRun(100, func() { e.Sent(payload, 0); e.Heard(pkt, time.Millisecond) }); n != 0 {
		t.Fatalf("%v allocations per packet", n)
	}
}

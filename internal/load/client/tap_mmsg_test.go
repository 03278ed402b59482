//go:build linux && (amd64 || arm64)

package client

import (
	"net"
	"testing"
	"time"
)

// TestBatchReader sends a light receiver's socket media and one STUN-like datagram: one read
// counts the media, hands on the other, takes every arrival time from the kernel, and allocates
// nothing.
func TestBatchReader(t *testing.T) {
	conn, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	out, err := net.DialUDP("udp4", nil, conn.LocalAddr().(*net.UDPAddr))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	start := time.Now()
	tp := newTap(func() time.Duration { return time.Since(start) }, 1)
	tp.setTWCC(testTWCCID)
	st := lightStream(tp)
	r := newBatchReader(conn)
	if r == nil {
		t.Fatal("no recvmmsg reader")
	}
	pkt := srtpLike(t, 0, 0, 0, true, 500)
	stun := make([]byte, 20)
	buf := make([]byte, 1500)
	seq := uint16(0)
	handedOn := 0
	round := func() {
		for i := 0; i < 4; i++ {
			seq++
			pkt[2], pkt[3] = byte(seq>>8), byte(seq)
			if _, err := out.Write(pkt); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := out.Write(stun); err != nil {
			t.Fatal(err)
		}
		before := tp.now()
		for { // every sampleEvery-th media packet is handed on (to Pion) too
			n, from, err := r.readFrom(buf, tp)
			if err != nil || from.Port() != uint16(out.LocalAddr().(*net.UDPAddr).Port) {
				t.Fatalf("read %d bytes from %v: %v", n, from, err)
			}
			if at := r.arrival(r.next-1, tp); at <= 0 || at > tp.now() || before-at > time.Second {
				t.Fatalf("arrival %v, read between %v and %v", at, before, tp.now())
			}
			if n == len(stun) {
				return
			}
			handedOn++
		}
	}
	round()
	if a := testing.AllocsPerRun(50, round); a != 0 {
		t.Errorf("%.1f allocations per round of 5 datagrams", a)
	}
	if c := st.Counters(); c.Packets != 4*52 || c.Lost != 0 || handedOn != 4*52/sampleEvery {
		t.Errorf("counted %+v, handed on %d: want 208 packets, %d handed on", c, handedOn, 4*52/sampleEvery)
	}
}

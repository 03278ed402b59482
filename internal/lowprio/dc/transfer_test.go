package dc

import (
	"context"
	"testing"
	"time"
)

// A generated stream crosses two Pion PeerConnections, opener sending (put), every byte checked,
// with both variants.
func TestTransferPionToPion(t *testing.T) {
	for _, variant := range []string{VariantLEDBAT, VariantLEDBATPlus} {
		t.Run(variant, func(t *testing.T) {
			p := newPCPair(t)
			const n = 3 << 20
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			ch, err := p.a.CreateDataChannel(Label(VerbPut, "gen:3145728"), Init())
			if err != nil {
				t.Fatal(err)
			}
			got := make(chan error, 1)
			v := &Verifier{N: n}
			var progress []Progress
			go func() {
				acc := <-p.accepted
				verb, name, err := ParseLabel(acc.Label())
				if err != nil || verb != VerbPut || name != "gen:3145728" || acc.Protocol() != Protocol {
					got <- err
					return
				}
				_, err = Receive(ctx, acc, v, Options{})
				got <- err
			}()
			st, err := Send(ctx, ch, Generated(n), Options{Variant: variant, Progress: func(pr Progress) { progress = append(progress, pr) }})
			if err != nil {
				t.Fatal(err)
			}
			if err := <-got; err != nil {
				t.Fatal(err)
			}
			if err := v.Check(); err != nil {
				t.Fatal(err)
			}
			if st.Bytes != n || len(progress) == 0 || !progress[len(progress)-1].Done {
				t.Fatalf("stats %+v, %d progress reports", st, len(progress))
			}
			t.Logf("%s: %d bytes in %v (%d retransmissions), last progress %+v", variant, st.Bytes, st.Elapsed, st.Retransmits, progress[len(progress)-1])
		})
	}
}

// slowWriter writes into w after a pause per write, as a disk that falls behind.
type slowWriter struct {
	w     *Verifier
	pause time.Duration
}

func (s *slowWriter) Write(p []byte) (int, error) {
	time.Sleep(s.pause)
	return s.w.Write(p)
}

// A receiver whose context ends once the whole stream has arrived (a server whose client closed
// its PeerConnection as soon as its FIN was acknowledged) still writes out what it holds and
// succeeds: the bytes were acknowledged, so dropping them would lose an upload the client
// believes delivered.
func TestReceiverCancelledAfterTheStreamArrivedWritesItOut(t *testing.T) {
	p := newPCPair(t)
	const n = 1 << 20
	ch, err := p.a.CreateDataChannel(Label(VerbPut, "gen:1048576"), Init())
	if err != nil {
		t.Fatal(err)
	}
	recvCtx, cancelRecv := context.WithCancel(context.Background())
	defer cancelRecv()
	v := &Verifier{N: n}
	got := make(chan error, 1)
	go func() {
		_, err := Receive(recvCtx, <-p.accepted, &slowWriter{w: v, pause: 50 * time.Millisecond}, Options{})
		got <- err
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := Send(ctx, ch, Generated(n), Options{}); err != nil {
		t.Fatal(err)
	}
	cancelRecv() // the sender is done: the receiver's writer is still at it (16 writes of 50 ms)
	if err := <-got; err != nil {
		t.Fatalf("the receiver ended with %v, want the acknowledged stream written out", err)
	}
	if err := v.Check(); err != nil {
		t.Fatal(err)
	}
}

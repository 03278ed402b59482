package dc

import (
	"context"
	"errors"
	"github.com/pion/webrtc/v4"
	"io"
	"runtime"
	"testing"
	"time"

	"github.com/strata-rtc/strata/cc"
	"github.com/strata-rtc/strata/internal/lowprio"
)

// serveGet answers the next accepted channel by sending gen:<n> with opts.
func serveGet(ctx context.Context, p *pcPair, n int64, opts Options) <-chan error {
	done := make(chan error, 1)
	go func() {
		ch := <-p.accepted
		_, err := Send(ctx, ch, Generated(n), opts)
		done <- err
	}()
	return done
}

// A receiver whose context ends sends a RESET (code 3): the sender ends with that reason, quickly.
func TestCancelResetsThePeer(t *testing.T) {
	p := newPCPair(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	served := serveGet(ctx, p, 1<<40, Options{})
	rctx, rcancel := context.WithCancel(ctx)
	var got int64
	_, err := Get(rctx, p.a, "gen:1099511627776", writerFunc(func(b []byte) (int, error) {
		if got += int64(len(b)); got > 1<<20 {
			rcancel()
		}
		return len(b), nil
	}), Options{})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("receiver: %v, want context.Canceled", err)
	}
	start := time.Now()
	err = <-served
	var re *lowprio.ResetError
	if !errors.As(err, &re) || re.Code != lowprio.CodeAbort {
		t.Fatalf("sender: %v, want the receiver's RESET (code 3)", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the sender took %v to notice", d)
	}
}

// A peer that vanishes (its PeerConnection closes mid-transfer) ends the transfer on this side
// with an error well before the protocol's 30 s idle timeout: the channel closes.
func TestPeerVanishes(t *testing.T) {
	p := newPCPair(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	served := serveGet(ctx, p, 1<<40, Options{})
	var got int64
	_, err := Get(ctx, p.a, "gen:1099511627776", writerFunc(func(b []byte) (int, error) {
		if got += int64(len(b)); got > 1<<20 && got-int64(len(b)) <= 1<<20 {
			go func() { _ = p.b.Close() }()
		}
		return len(b), nil
	}), Options{})
	if err == nil {
		t.Fatal("the receiver finished a stream whose sender vanished")
	}
	if err := <-served; err == nil {
		t.Fatal("the sender finished although its PeerConnection closed")
	}
	if ctx.Err() != nil {
		t.Fatal("noticed only at the test's timeout")
	}
	t.Logf("receiver: %v", err)
}

// Options.Cap holds the sender below the cap: 1 MB under 4 Mbit/s cannot take less than 2 s
// (the bound is on the least time, which a slow machine cannot break).
func TestCapLimitsTheRate(t *testing.T) {
	p := newPCPair(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	const n, capRate = 1_000_000, 4 * cc.Mbps
	polled := 0
	served := serveGet(ctx, p, n, Options{Cap: func() cc.Bitrate { polled++; return capRate }})
	v := &Verifier{N: n}
	st, err := Get(ctx, p.a, "gen:1000000", v, Options{})
	if err != nil || v.Check() != nil {
		t.Fatal(err, v.Check())
	}
	if err := <-served; err != nil {
		t.Fatal(err)
	}
	least := time.Duration(float64(n*8) / float64(capRate) * 0.8 * float64(time.Second))
	t.Logf("%d bytes in %v under a %v cap, cap polled %d times", n, st.Elapsed, capRate, polled)
	if st.Elapsed < least || polled < 10 {
		t.Errorf("%v (cap polled %d times), want ≥ %v at %v", st.Elapsed, polled, least, capRate)
	}
}

// A finished transfer leaves no goroutine of its own behind.
func TestNoGoroutineLeft(t *testing.T) {
	p := newPCPair(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	before := runtime.NumGoroutine()
	for range 3 {
		served := serveGet(ctx, p, 200_000, Options{})
		if _, err := Get(ctx, p.a, "gen:200000", io.Discard, Options{}); err != nil {
			t.Fatal(err)
		}
		if err := <-served; err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(3 * time.Second)
	for runtime.NumGoroutine() > before+2 { // Pion may still be tearing a stream down
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<16)
			t.Fatalf("%d goroutines, %d before:\n%s", runtime.NumGoroutine(), before, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(20 * time.Millisecond)
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(b []byte) (int, error) { return f(b) }

// A writer that stalls for longer than the idle timeout closes the receive window; the sender's
// window probes keep both sides' idle clocks running, and the transfer completes when it resumes.
func TestStalledWriterDoesNotTimeOut(t *testing.T) {
	p := newPCPair(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	const n = 2_000_000
	cfg := lowprio.Config{IdleTimeout: 2 * time.Second}
	served := serveGet(ctx, p, n, Options{Config: cfg})
	v := &Verifier{N: n}
	stalled := false
	_, err := Get(ctx, p.a, "gen:2000000", writerFunc(func(b []byte) (int, error) {
		if !stalled && v.Off > n/4 {
			stalled = true
			time.Sleep(5 * time.Second)
		}
		return v.Write(b)
	}), Options{Config: cfg})
	if err != nil || v.Check() != nil {
		t.Fatal(err, v.Check())
	}
	if err := <-served; err != nil {
		t.Fatal("sender:", err)
	}
}

// A channel attached in the OnDataChannel handler keeps the messages that arrive before its
// transfer runs: the opener's first window is not dropped by Pion, so the sender needs no
// retransmission (without Attach it loses them and waits for its timeout).
func TestAttachKeepsEarlyMessages(t *testing.T) {
	for _, early := range []bool{true, false} {
		p := newPCPair(t)
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		transfers := make(chan *Transfer, 1)
		p.b.OnDataChannel(func(ch *webrtc.DataChannel) {
			if early {
				transfers <- Attach(ch, Options{})
			} else {
				p.accepted <- ch
			}
		})
		received := make(chan error, 1)
		go func() {
			time.Sleep(300 * time.Millisecond) // the accepting side is busy before it runs the transfer
			var tr *Transfer
			if early {
				tr = <-transfers
			} else {
				tr = Attach(<-p.accepted, Options{})
			}
			_, err := tr.Receive(ctx, io.Discard)
			received <- err
		}()
		st, err := Put(ctx, p.a, "gen:100000", Generated(100_000), Options{})
		if err != nil {
			t.Fatal(err)
		}
		if err := <-received; err != nil {
			t.Fatal(err)
		}
		t.Logf("attached early %v: %d retransmissions, %d timeouts, %v", early, st.Retransmits, st.Timeouts, st.Elapsed)
		if early && (st.Retransmits > 0 || st.Timeouts > 0) {
			t.Errorf("attached early: %d retransmissions, %d timeouts", st.Retransmits, st.Timeouts)
		}
		if !early && st.Timeouts == 0 {
			t.Errorf("attached late: no timeout, so the test shows nothing")
		}
	}
}

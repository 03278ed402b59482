package flows

import (
	"context"
	"math"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/emu/emutest"
	"github.com/strata-rtc/strata/internal/emu/endpoint"
	"github.com/strata-rtc/strata/internal/lab/scenario"
)

func cbrEnv(src, dst endpoint.Host, rec *emutest.Recorder, rate float64, size int) endpoint.Env {
	return endpoint.Env{Spec: scenario.Flow{Name: "c1", Kind: "cbr", Rate: rate, PacketSize: size},
		Src: src, Dst: dst, Rec: rec, Clock: rec, Seed: 1, Log: os.Stderr}
}

// TestCBRRate sends 2 Mbit/s of 1000-byte packets for 3 s over a free
// emulated path (100 Mbit/s with a queue deep enough to absorb a stalled
// emulator's burst): the receiver gets every packet, in the asked size, at
// the rate within 3 %.
func TestCBRRate(t *testing.T) {
	src, dst := newPair(t, 100e6, 2*time.Millisecond, 5000)
	rec := emutest.NewRecorder()
	before := runtime.NumGoroutine()
	fl, err := NewCBR(cbrEnv(src, dst, rec, 2e6, 1000))
	if err != nil {
		t.Fatal(err)
	}
	if err := fl.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	time.Sleep(3 * time.Second)
	elapsed := time.Since(began) // sending time; Stop then drains the receiver
	if err := fl.Stop(); err != nil {
		t.Fatal(err)
	}
	goroutinesBack(t, before)
	// Packets the pacer gave up after a stall of the whole process (logged;
	// seen at 365 ms with six busy loops on the two cores) count as sent: the
	// host, not the flow, lost them.
	f := fl.(*cbrFlow)
	sent, skipped := f.sent.Load(), f.skipped.Load()
	goodput := rec.Goodputs()
	if n := int64(len(goodput)); n != sent {
		t.Errorf("%d datagrams received of %d sent over a free 100 Mbit/s path", n, sent)
	}
	got := float64(rec.Total()+int(skipped)*1000) * 8 / elapsed.Seconds()
	if math.Abs(got-2e6)/2e6 > 0.03 {
		t.Errorf("received %.0f bit/s over %v (counting %d skipped packets), want 2 Mbit/s ± 3 %%", got, elapsed, skipped)
	}
	for _, s := range goodput {
		if s.V != 1000 {
			t.Fatalf("a %.0f-byte packet, want 1000 (972 bytes of payload + 28 of IP/UDP)", s.V)
		}
	}
	t.Logf("%d packets (%d skipped), %.4f Mbit/s over %v", len(goodput), skipped, got/1e6, elapsed)
}

// TestCBRBadSpec checks a CBR flow with no rate or an impossible packet
// size is refused.
func TestCBRBadSpec(t *testing.T) {
	var h endpoint.Host = emutest.NoHost{}
	for _, c := range []struct {
		rate float64
		size int
		want string
	}{
		{0, 1000, "rate must be positive"},
		{1e6, 28, "packet_size 28"},
		{1e6, 70000, "packet_size 70000"},
	} {
		if _, err := NewCBR(cbrEnv(h, h, emutest.NewRecorder(), c.rate, c.size)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("rate %v size %d: error %v, want one saying %s", c.rate, c.size, err, c.want)
		}
	}
}

package gcc

import (
	"testing"
	"time"

	"github.com/strata-rtc/strata/cc"
)

func TestREMBSchedule(t *testing.T) {
	r := NewReceiver()
	if _, due := r.REMB(0); !due {
		t.Fatal("first REMB not due")
	}
	if _, due := r.REMB(500 * time.Millisecond); due {
		t.Error("REMB due again after 500 ms without a drop")
	}
	if v, due := r.REMB(time.Second); !due || v != r.Estimate() {
		t.Errorf("REMB after 1 s: %v, %v; want due with the estimate %v", v, due, r.Estimate())
	}
	r.engine.rate.rate *= 0.98 // a 2 % drop is not urgent
	if _, due := r.REMB(time.Second + 10*time.Millisecond); due {
		t.Error("REMB sent at once for a 2 % drop")
	}
	r.engine.rate.rate *= 0.97 // now ≥ 3 % below the last value sent
	if _, due := r.REMB(time.Second + 20*time.Millisecond); !due {
		t.Error("REMB not sent at once after a drop of more than 3 %")
	}
}

func TestAbsSendTimeDrivesReceiver(t *testing.T) {
	// The receiver only needs differences of send times, so an unwrapped abs-send-time (which
	// wraps every 64 s) works across the wrap.
	var u cc.AbsSendTimeUnwrapper
	r := NewReceiver()
	start := uint32(63<<18) + 1 // one second before the wrap
	for i := 0; i < 300; i++ {
		raw := (start + uint32(i)*(1<<18)/100) & (1<<24 - 1) // 10 ms steps
		send := u.Unwrap(raw)
		r.OnPacket(cc.ReceivedPacket{SeqNo: int64(i), SendTime: send, Arrival: time.Duration(i)*10*time.Millisecond + 30*time.Millisecond, Size: 1200})
		if r.State().Usage != cc.Normal {
			t.Fatalf("packet %d (raw %#x): usage %v across the wrap, want normal", i, raw, r.State().Usage)
		}
	}
}

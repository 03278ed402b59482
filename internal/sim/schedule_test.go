package sim

import (
	"math"
	"testing"
	"time"
)

func TestFinishConstantRate(t *testing.T) {
	c := newCursor(ConstantRate(1e6))
	// 1250 bytes at 1 Mbit/s take 10 ms.
	if got := c.finish(time.Second, 1250*8); got != time.Second+10*time.Millisecond {
		t.Fatalf("finish %v", got)
	}
}

func TestFinishAcrossStepsAndOutage(t *testing.T) {
	s := RateSchedule{{0, 1e6}, {10 * time.Millisecond, 0}, {20 * time.Millisecond, 2e6}}
	c := newCursor(s)
	// Start at 5 ms: 5000 bits at 1 Mbit/s by 10 ms, nothing until 20 ms,
	// the remaining 5000 bits at 2 Mbit/s take 2.5 ms.
	got := c.finish(5*time.Millisecond, 10000)
	want := 22*time.Millisecond + 500*time.Microsecond
	if got != want {
		t.Fatalf("finish %v, want %v", got, want)
	}
	if bits := s.Bits(0, 30*time.Millisecond); math.Abs(bits-(10000+20000)) > 1e-6 {
		t.Fatalf("bits %v", bits)
	}
	if s.At(15*time.Millisecond) != 0 || s.At(25*time.Millisecond) != 2e6 {
		t.Fatal("At wrong")
	}
}

func TestFinishNeverWhenLinkStaysDown(t *testing.T) {
	c := newCursor(RateSchedule{{0, 1e6}, {time.Second, 0}})
	if got := c.finish(999*time.Millisecond, 1e6); got != Never {
		t.Fatalf("finish %v, want Never", got)
	}
}

func TestRateScheduleValidate(t *testing.T) {
	bad := []RateSchedule{nil, {{time.Second, 1}}, {{0, -1}}, {{0, 1}, {0, 2}}, {{0, math.NaN()}}}
	for i, s := range bad {
		if s.Validate() == nil {
			t.Errorf("schedule %d accepted", i)
		}
	}
	if err := (RateSchedule{{0, 0}, {time.Second, 5}}).Validate(); err != nil {
		t.Fatal(err)
	}
}

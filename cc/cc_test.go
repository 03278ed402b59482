package cc

import (
	"encoding/json"
	"math"
	"testing"
	"time"
)

func TestBitrateFromFloatIsAlwaysFiniteAndNonNegative(t *testing.T) {
	for _, tc := range []struct {
		in   float64
		want Bitrate
	}{
		{math.NaN(), 0}, {math.Inf(-1), 0}, {-5, 0}, {0, 0}, {1.4, 1}, {1.6, 2},
		{math.Inf(1), MaxBitrate}, {1e300, MaxBitrate}, {2.5e6, 2500 * Kbps},
	} {
		if got := BitrateFromFloat(tc.in); got != tc.want {
			t.Errorf("BitrateFromFloat(%v) = %d, want %d", tc.in, got, tc.want)
		}
	}
}

func TestBitrateConversions(t *testing.T) {
	if got := BitrateOf(125000, time.Second); got != Mbps {
		t.Errorf("125 kB in 1 s = %v, want 1 Mbit/s", got)
	}
	if got := Mbps.BytesIn(300 * time.Millisecond); got != 37500 {
		t.Errorf("1 Mbit/s for 300 ms = %d bytes, want 37500", got)
	}
	if got := Mbps.TimeFor(1250); got != 10*time.Millisecond {
		t.Errorf("1250 bytes at 1 Mbit/s take %v, want 10 ms", got)
	}
	for r, want := range map[Bitrate]string{1500 * Kbps: "1.5 Mbit/s", 300 * Kbps: "300 kbit/s", 12: "12 bit/s"} {
		if r.String() != want {
			t.Errorf("%d.String() = %q, want %q", int64(r), r.String(), want)
		}
	}
	if got := PacingRateFor(12500, 100*time.Millisecond, 1); got != Mbps {
		t.Errorf("PacingRateFor(12500 B, 100 ms) = %v, want 1 Mbit/s", got)
	}
	if PacingRateFor(12500, 0, 1) != 0 {
		t.Error("PacingRateFor without an RTT should be 0 (unpaced)")
	}
}

func TestRTTEstimatorFollowsRFC6298(t *testing.T) {
	e := NewRTTEstimator()
	if e.RTO() != time.Second {
		t.Errorf("initial RTO %v, want 1 s", e.RTO())
	}
	e.MinRTO = 0
	e.Update(400 * time.Millisecond)
	// First sample: SRTT = R, RTTVAR = R/2, RTO = SRTT + 4·RTTVAR.
	if e.SRTT() != 400*time.Millisecond || e.RTTVar() != 200*time.Millisecond || e.RTO() != 1200*time.Millisecond {
		t.Errorf("after 400 ms: SRTT %v RTTVAR %v RTO %v, want 400 ms, 200 ms, 1.2 s", e.SRTT(), e.RTTVar(), e.RTO())
	}
	e.Update(200 * time.Millisecond)
	// RTTVAR = 3/4·200 + 1/4·|400−200| = 200; SRTT = 7/8·400 + 1/8·200 = 375.
	if e.SRTT() != 375*time.Millisecond || e.RTTVar() != 200*time.Millisecond {
		t.Errorf("after 200 ms: SRTT %v RTTVAR %v, want 375 ms and 200 ms", e.SRTT(), e.RTTVar())
	}
	rto := e.RTO()
	e.Backoff()
	e.Backoff()
	if e.RTO() != 4*rto {
		t.Errorf("two backoffs: %v, want %v", e.RTO(), 4*rto)
	}
	for i := 0; i < 20; i++ {
		e.Backoff()
	}
	if e.RTO() != DefaultMaxRTO {
		t.Errorf("many backoffs: %v, want the 60 s ceiling", e.RTO())
	}
	e.Update(0) // ignored
	if e.RTO() != DefaultMaxRTO {
		t.Error("a zero sample cleared the backoff")
	}
}

func TestAbsSendTimeUnwrap(t *testing.T) {
	var u AbsSendTimeUnwrapper
	const second = 1 << 18
	got := u.Unwrap(63*second + second/2) // 63.5 s
	if got != 63500*time.Millisecond {
		t.Errorf("first value %v, want 63.5 s", got)
	}
	if got := u.Unwrap(second / 2); got != 64500*time.Millisecond { // wrapped: 64.5 s
		t.Errorf("after the wrap %v, want 64.5 s", got)
	}
	if got := u.Unwrap(63 * second); got != 63*time.Second { // reordered across the wrap
		t.Errorf("reordered %v, want 63 s", got)
	}
}

func FuzzAbsSendTimeUnwrap(f *testing.F) {
	f.Add(uint32(0), uint32(1<<23), uint32(1<<24-1))
	f.Add(uint32(1<<24-1), uint32(0), uint32(5))
	f.Fuzz(func(t *testing.T, a, b, c uint32) {
		var u AbsSendTimeUnwrapper
		prev := u.Unwrap(a)
		for _, v := range []uint32{b, c} {
			cur := u.Unwrap(v)
			// Consecutive values are at most half a cycle (32 s) apart, and agree with the raw
			// value modulo the 64 s cycle.
			if d := cur - prev; d > 32*time.Second || d < -32*time.Second {
				t.Fatalf("unwrap jumped %v", d)
			}
			raw := int64(v) & (1<<24 - 1)
			back := int64(math.Floor(float64(cur)*(1<<18)/float64(time.Second))) & (1<<24 - 1)
			if diff := (back - raw) & (1<<24 - 1); diff > 1 && diff < 1<<24-1 { // ±1 unit of rounding
				t.Fatalf("Unwrap(%#x) = %v, which is %#x in the cycle", v, cur, back)
			}
			prev = cur
		}
	})
}

func TestSeqUnwrap(t *testing.T) {
	var u SeqUnwrapper
	for _, step := range []struct {
		in   uint16
		want int64
	}{
		{65534, 65534}, // the first value as it is
		{1, 65537},     // wrapped
		{65535, 65535}, // reordered across the wrap
		{2, 65538},
		{2 + 32767, 98305}, // just under half a cycle on is forward
	} {
		if got := u.Unwrap(step.in); got != step.want {
			t.Errorf("Unwrap(%d) = %d, want %d", step.in, got, step.want)
		}
	}
	u.Advance(90000) // behind: no change
	u.Advance(131070)
	if got := u.Unwrap(0); got != 131072 {
		t.Errorf("after Advance(131070), Unwrap(0) = %d, want 131072", got)
	}
}

func FuzzSeqUnwrap(f *testing.F) {
	f.Add(uint16(0), uint16(32768), uint16(65535))
	f.Add(uint16(65535), uint16(0), uint16(5))
	f.Fuzz(func(t *testing.T, a, b, c uint16) {
		var u SeqUnwrapper
		prev := u.Unwrap(a)
		for _, v := range []uint16{b, c} {
			cur := u.Unwrap(v)
			// Consecutive values are at most half a cycle apart and agree with the raw value
			// modulo the cycle.
			if d := cur - prev; d > 1<<15 || d < -(1<<15) {
				t.Fatalf("unwrap jumped %d", d)
			}
			if uint16(cur) != v {
				t.Fatalf("Unwrap(%d) = %d, which is %d in the cycle", v, cur, uint16(cur))
			}
			prev = cur
		}
	})
}

func TestStateJSONUsesNames(t *testing.T) {
	b, err := json.Marshal(State{Algorithm: "gcc", Target: Mbps, Usage: Overuse})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"algorithm":"gcc","target_bps":1000000,"usage":"overuse"}`
	if string(b) != want {
		t.Errorf("JSON %s, want %s", b, want)
	}
}

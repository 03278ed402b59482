package alloc

import (
	"testing"
	"time"

	"github.com/strata-rtc/strata/cc"
)

func TestReserved(t *testing.T) {
	for _, tc := range []struct {
		capacity, background cc.Bitrate
		reserve              float64
		want                 cc.Bitrate
	}{
		{10 * cc.Mbps, 0, 0.8, 10 * cc.Mbps},               // nothing else: all of it
		{10 * cc.Mbps, 1 * cc.Mbps, 0.8, 9 * cc.Mbps},      // light background: what it leaves
		{10 * cc.Mbps, 9500 * cc.Kbps, 0.8, 8 * cc.Mbps},   // TCP fills the link: the reservation
		{10 * cc.Mbps, 9500 * cc.Kbps, 0, 500 * cc.Kbps},   // no reservation: yield
		{10 * cc.Mbps, 12 * cc.Mbps, 0, -2 * cc.Mbps},      // over capacity, as before
		{2 * cc.Mbps, 2 * cc.Mbps, 0.5, 1 * cc.Mbps},       // half of a small link
		{10 * cc.Mbps, 9500 * cc.Kbps, -1, 500 * cc.Kbps},  // nonsense reservation: none
		{cc.MaxBitrate, 0, 0.9, cc.MaxBitrate},             // no overflow
		{10 * cc.Mbps, 2 * cc.Mbps, 0.8, 8 * cc.Mbps},      // equal
		{10 * cc.Mbps, 2*cc.Mbps + 1, 0.8, 8 * cc.Mbps},    // the reservation wins by a bit
		{10 * cc.Mbps, 2*cc.Mbps - 1, 0.8, 8*cc.Mbps + 1},  // the measurement wins by a bit
		{10 * cc.Mbps, 0, 0.999, 10 * cc.Mbps},             // capped by the capacity
		{100 * cc.Mbps, 99 * cc.Mbps, 0.8, 80 * cc.Mbps},   // large link
		{1 * cc.Mbps, 10 * cc.Mbps, 0.8, 800 * cc.Kbps},    // background over capacity
		{10 * cc.Mbps, 10 * cc.Mbps, 0.05, 500 * cc.Kbps},  // small reservation
		{10 * cc.Mbps, 10 * cc.Mbps, 0.001, 10 * cc.Kbps},  // tiny reservation
		{10 * cc.Mbps, 0, 0, 10 * cc.Mbps},                 // zero everything
		{0, 0, 0.8, 0},                                     // zero capacity
		{10 * cc.Mbps, 10*cc.Mbps - 1, 0.8, 8 * cc.Mbps},   // almost full
		{3 * cc.Mbps, 2500 * cc.Kbps, 0.8, 2400 * cc.Kbps}, // 3 Mbit/s link
		{10 * cc.Mbps, 5 * cc.Mbps, 0.5, 5 * cc.Mbps},      // half and half
		{10 * cc.Mbps, 4 * cc.Mbps, 0.5, 6 * cc.Mbps},      // background below its half
		{10 * cc.Mbps, 6 * cc.Mbps, 0.5, 5 * cc.Mbps},      // background above its half
		{10 * cc.Mbps, 6 * cc.Mbps, 0.4, 4 * cc.Mbps},      // reservation equals what is left
		{10 * cc.Mbps, 6 * cc.Mbps, 0.3, 4 * cc.Mbps},      // reservation below what is left
		{10 * cc.Mbps, 6 * cc.Mbps, 0.41, 4100 * cc.Kbps},  // reservation just above
		{10 * cc.Mbps, 0, 0.5, 10 * cc.Mbps},               // idle link
		{10 * cc.Mbps, 10 * cc.Mbps, 0.5, 5 * cc.Mbps},     // saturated link
		{10 * cc.Mbps, 20 * cc.Mbps, 0.5, 5 * cc.Mbps},     // oversaturated link
		{10 * cc.Mbps, 20 * cc.Mbps, 0, -10 * cc.Mbps},     // no reservation, oversaturated
	} {
		if got := Reserved(tc.capacity, tc.background, tc.reserve); got != tc.want {
			t.Errorf("Reserved(%v, %v, %g) = %v, want %v", tc.capacity, tc.background, tc.reserve, got, tc.want)
		}
	}
}

func TestMeterRate(t *testing.T) {
	for _, tc := range []struct {
		capacity, media cc.Bitrate
		margin, reserve float64
		want            cc.Bitrate
	}{
		{10 * cc.Mbps, 7200 * cc.Kbps, 0.1, 0.8, 2080 * cc.Kbps}, // seed 000 exp. 3, 5 sessions: 3+2+2+2+2 layers
		{10 * cc.Mbps, 0, 0.1, 0.8, 10 * cc.Mbps},                // no media: no limit below the capacity
		{10 * cc.Mbps, 8500 * cc.Kbps, 0.1, 0.8, 2 * cc.Mbps},    // media over its reservation: background keeps 20 %
		{10 * cc.Mbps, 3 * cc.Mbps, 0, 0.8, 7 * cc.Mbps},         // no margin
		{10 * cc.Mbps, 20 * cc.Mbps, 0.1, 0, 10 * cc.Mbps},       // no reservation: background may use the whole link
		{10 * cc.Mbps, 1 * cc.Mbps, 0.1, 2, 8900 * cc.Kbps},      // nonsense reservation clamped
	} {
		if got := MeterRate(tc.capacity, tc.media, tc.margin, tc.reserve); got != tc.want {
			t.Errorf("MeterRate(%v, %v, %g, %g) = %v, want %v", tc.capacity, tc.media, tc.margin, tc.reserve, got, tc.want)
		}
	}
	if n := testing.AllocsPerRun(100, func() {
		_ = MeterRate(10*cc.Mbps, 7*cc.Mbps, 0.1, 0.8) + Reserved(10*cc.Mbps, 9*cc.Mbps, 0.8)
	}); n != 0 {
		t.Errorf("allocates %.0f times", n)
	}
}

func TestMeterOpening(t *testing.T) {
	const c = 10_000_000
	for _, tc := range []struct {
		rate      cc.Bitrate
		age, rise time.Duration
		want      cc.Bitrate
	}{
		{7_000_000, 0, 4 * time.Second, 2_000_000},
		{7_000_000, 2 * time.Second, 4 * time.Second, 4_500_000},
		{7_000_000, 3999 * time.Millisecond, 4 * time.Second, 5_750_000},
		{7_000_000, 4 * time.Second, 4 * time.Second, 7_000_000},
		{7_000_000, 0, 0, 7_000_000},               // no rise
		{1_000_000, 0, 4 * time.Second, 1_000_000}, // already below the floor: never above rate
	} {
		if got := MeterOpening(tc.rate, c, 0.8, tc.age, tc.rise); got != tc.want {
			t.Errorf("MeterOpening(%d, age %v, rise %v) = %d, want %d", tc.rate, tc.age, tc.rise, got, tc.want)
		}
	}
}

package yamlfield

import (
	"math"
	"testing"
	"time"
)

func TestParseRate(t *testing.T) {
	rates := map[string]float64{"10Mbps": 10e6, "1.5 Mbit/s": 1.5e6, "250kbps": 250e3, "1e3bps": 1e3, "1Gbps": 1e9}
	for in, want := range rates {
		if got, err := ParseRate(in); err != nil || got != want {
			t.Errorf("%s: %v %v", in, got, err)
		}
	}
	for _, bad := range []string{"10", "fast", "10Mbpss", "-1Mbps", "NaNMbps", ""} {
		if _, err := ParseRate(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	if mul, ok := RateUnit("kbit/s"); !ok || mul != 1e3 {
		t.Errorf("RateUnit(kbit/s) = %v %v", mul, ok)
	}
	if _, ok := RateUnit("MB"); ok {
		t.Error("MB accepted as a rate unit")
	}
}

func TestParseDuration(t *testing.T) {
	if d, err := ParseDuration(" 1m30s "); err != nil || d != 90*time.Second {
		t.Errorf("1m30s: %v %v", d, err)
	}
	for bad, want := range map[string]string{
		"20":   `missing unit in "20" (write e.g. 20ms or 20s)`,
		"-5s":  `negative duration "-5s"`,
		"soon": `"soon" is not a duration (write e.g. 100ms, 2s, 1m30s)`,
	} {
		if _, err := ParseDuration(bad); err == nil || err.Error() != want {
			t.Errorf("%q: %v, want %q", bad, err, want)
		}
	}
	if !IsDurationUnit("20ms") || IsDurationUnit("20pkt") || IsDurationUnit("x") {
		t.Error("IsDurationUnit misclassifies")
	}
}

func TestParseSizeAndProbability(t *testing.T) {
	if v, pk, err := ParseSize("60KB", true); err != nil || v != 60000 || pk {
		t.Errorf("60KB: %v %v %v", v, pk, err)
	}
	if v, pk, err := ParseSize("100pkt", true); err != nil || v != 100 || !pk {
		t.Errorf("100pkt: %v %v %v", v, pk, err)
	}
	for _, bad := range []string{"100pkt", "1.5pkt", "-1KB", "60"} {
		packets := bad == "1.5pkt"
		if _, _, err := ParseSize(bad, packets); err == nil {
			t.Errorf("%q (packets %v) accepted", bad, packets)
		}
	}
	if p, err := ParseProbability("5%"); err != nil || p != 0.05 {
		t.Errorf("5%%: %v %v", p, err)
	}
	if p, err := ParseProbability("0.25"); err != nil || p != 0.25 {
		t.Errorf("0.25: %v %v", p, err)
	}
	if _, err := ParseProbability("5"); err == nil {
		t.Error("5 accepted as a probability")
	}
}

// FuzzUnits checks that the unit parsers never accept a value outside their domain.
func FuzzUnits(f *testing.F) {
	for _, s := range []string{"10Mbps", "1.5 Mbit/s", "1e3bps", "-1Mbps", "20ms", "1m30s", "60KB", "100pkt", "5%", "0.3", "1e", "NaN", "1e308Gbps"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if v, err := ParseRate(s); err == nil && (v < 0 || math.IsNaN(v) || math.IsInf(v, 0)) {
			t.Fatalf("ParseRate(%q) = %v", s, v)
		}
		if d, err := ParseDuration(s); err == nil && d < 0 {
			t.Fatalf("ParseDuration(%q) = %v", s, d)
		}
		if v, pk, err := ParseSize(s, true); err == nil && (v < 0 || math.IsNaN(v) || pk && v != math.Trunc(v)) {
			t.Fatalf("ParseSize(%q) = %v %v", s, v, pk)
		}
		if p, err := ParseProbability(s); err == nil && !(p >= 0 && p <= 1) {
			t.Fatalf("ParseProbability(%q) = %v", s, p)
		}
	})
}

package media

import "testing"

func TestOpusSamples(t *testing.T) {
	for _, c := range []struct {
		name string
		p    []byte
		want int
	}{
		{"empty", nil, 0},
		{"SILK 20 ms", []byte{1 << 3}, 960},
		{"SILK 60 ms", []byte{3 << 3}, 2880},
		{"hybrid 10 ms", []byte{12 << 3}, 480},
		{"CELT 2.5 ms", []byte{16 << 3}, 120},
		{"CELT 20 ms, two frames", []byte{31<<3 | 1}, 1920},
		{"CELT 20 ms, code 3, 3 frames", []byte{31<<3 | 3, 3}, 2880},
		{"code 3 without count", []byte{31<<3 | 3}, 0},
		{"code 3, zero frames", []byte{31<<3 | 3, 0}, 0},
		{"over 120 ms", []byte{3<<3 | 3, 3}, 0}, // 3 × 60 ms
	} {
		if got := OpusSamples(c.p); got != c.want {
			t.Errorf("%s: %d samples, want %d", c.name, got, c.want)
		}
	}
}

package streaming

import "testing"

// TestMountName: the names Janus 1.1.2 gives mountpoints (janus_streaming_create_rtp_source,
// _file_source, _rtsp_source).
func TestMountName(t *testing.T) {
	str := func(s string) *string { return &s }
	for _, c := range []struct {
		kind string
		name *string
		want string
	}{
		{"rtp", nil, "mp-42"},
		{"live", nil, "mp-42"},
		{"ondemand", nil, "mp-42"},
		{"rtsp", nil, "42"},
		{"rtp", str("cam"), "cam"},
		{"rtp", str("5cams"), "mp-5cams"},
		{"rtp", str(" -3"), "mp- -3"},
		{"rtp", str("0cams"), "0cams"},
		{"rtp", str("00"), "00"},
		{"rtp", str("+-1"), "+-1"},
		{"rtsp", str("0cams"), "mp-0cams"},
		{"rtsp", str("7"), "mp-7"},
		{"rtp", str(""), ""},
	} {
		if got := mountName(c.kind, 42, c.name); got != c.want {
			t.Errorf("%s mountpoint named %v: %q, want %q", c.kind, c.name, got, c.want)
		}
	}
}

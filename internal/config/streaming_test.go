package config

import "testing"

// TestStreamingFreePorts: FreePorts moves every port of the reference sample mountpoints to 0
// (and no other setting), on a copy.
func TestStreamingFreePorts(t *testing.T) {
	ref := Default().Plugins.Streaming
	st := ref
	st.FreePorts()
	if len(st.Mountpoints) != len(ref.Mountpoints) {
		t.Fatalf("%d mountpoints, want %d", len(st.Mountpoints), len(ref.Mountpoints))
	}
	ports := 0
	check := func(id uint64, name string, got, was *int) {
		if (got == nil) != (was == nil) {
			t.Errorf("mountpoint %d: %s set %v, was %v", id, name, got != nil, was != nil)
			return
		}
		if got != nil {
			ports++
			if *got != 0 || *was == 0 {
				t.Errorf("mountpoint %d: %s %d (reference %d), want 0 and the reference unchanged", id, name, *got, *was)
			}
		}
	}
	for i, m := range st.Mountpoints {
		r := ref.Mountpoints[i]
		check(m.ID, "audioport", m.AudioPort, r.AudioPort)
		check(m.ID, "videoport", m.VideoPort, r.VideoPort)
		for j := range m.Media {
			check(m.ID, "port", m.Media[j].Port, r.Media[j].Port)
		}
		if m.ID != r.ID || m.Description != r.Description || len(m.Media) != len(r.Media) {
			t.Errorf("mountpoint %+v changed beyond its ports (reference %+v)", m, r)
		}
	}
	if ports != 5 {
		t.Errorf("%d ports moved, want the samples' 5 (5002, 5004, 5102, 5104, 5106)", ports)
	}
}

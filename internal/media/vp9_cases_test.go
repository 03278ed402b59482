package media

import "testing"

// TestVP9FlexibleWithScalabilityStructure: an inter picture in flexible mode whose reference indices
// are followed by a scalability structure (one layer with its size, one group with one reference).
func TestVP9FlexibleWithScalabilityStructure(t *testing.T) {
	// P L F B V; TID 0 SID 0; P_DIFF 1 (N), P_DIFF 1; SS: N_S 0, Y G; 1x1; one group, 1 ref; P_DIFF 5.
	p := []byte{0x7a, 0x00, 0x03, 0x02, 0x18, 0, 1, 0, 1, 0x01, 0x04, 5, 0xaa}
	f, ok := ParseVP9(p)
	if !ok || f.SID != 0 || f.TID != 0 || f.Keyframe || f.SpatialSwitch || !f.Start {
		t.Fatalf("flags %+v ok=%v", f, ok)
	}
	for n := 5; n < 12; n++ { // every cut inside the scalability structure (bytes 4 to 11) is malformed
		if _, ok := ParseVP9(p[:n]); ok {
			t.Errorf("cut at %d accepted", n)
		}
	}
}

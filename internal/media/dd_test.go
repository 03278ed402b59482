package media

import "testing"

// bitWriter builds Dependency Descriptors for tests.
type bitWriter struct {
	b []byte
	n int
}

func (w *bitWriter) put(v uint32, bits int) {
	for i := bits - 1; i >= 0; i-- {
		if w.n%8 == 0 {
			w.b = append(w.b, 0)
		}
		if v>>i&1 == 1 {
			w.b[len(w.b)-1] |= 0x80 >> (w.n % 8)
		}
		w.n++
	}
}

// l1t3Structure writes a descriptor with an L1T3 template structure: templates S0T0 (key), S0T0,
// S0T1, S0T2, S0T2 and decode targets T0, T0-T1, T0-T2.
func l1t3Structure(templateID uint32, frame uint32) []byte {
	w := &bitWriter{}
	w.put(1, 1) // start
	w.put(1, 1) // end
	w.put(templateID, 6)
	w.put(frame, 16)
	w.put(1, 1) // structure present
	w.put(0, 1) // active decode targets
	w.put(0, 3) // custom dtis, fdiffs, chains
	w.put(0, 6) // template id offset
	w.put(2, 5) // 3 decode targets
	for _, idc := range []uint32{0, 1, 1, 0, 3} {
		w.put(idc, 2)
	}
	dtis := [][3]uint32{{2, 2, 2}, {3, 3, 3}, {0, 2, 3}, {0, 0, 1}, {0, 0, 1}}
	for _, d := range dtis {
		for _, v := range d {
			w.put(v, 2)
		}
	}
	for _, fd := range [][]uint32{nil, {4}, {2}, {1}, {1}} {
		for _, v := range fd {
			w.put(1, 1)
			w.put(v-1, 4)
		}
		w.put(0, 1)
	}
	w.put(0, 2) // chain_cnt = ns(4) = 0
	w.put(0, 1) // no resolutions
	return w.b
}

func mandatoryOnly(start, end bool, templateID, frame uint32) []byte {
	w := &bitWriter{}
	b := func(v bool) uint32 {
		if v {
			return 1
		}
		return 0
	}
	w.put(b(start), 1)
	w.put(b(end), 1)
	w.put(templateID, 6)
	w.put(frame, 16)
	return w.b
}

func TestDependencyDescriptorL1T3(t *testing.T) {
	var d DDParser
	if _, ok := d.Parse(mandatoryOnly(true, true, 2, 1)); ok {
		t.Fatal("a template before any structure was accepted")
	}
	fr, ok := d.Parse(l1t3Structure(0, 10))
	if !ok || !fr.StructureAttached || fr.SID != 0 || fr.TID != 0 || !fr.Switch || fr.References != 0 {
		t.Fatalf("keyframe descriptor: %+v ok=%v", fr, ok)
	}
	f := NoLayers()
	fr.Flags(&f)
	if !f.Keyframe || !f.Start || !f.End || !f.SwitchUp {
		t.Fatalf("keyframe flags: %+v", f)
	}
	if d.DecodeTargets() != 3 {
		t.Fatalf("decode targets %d", d.DecodeTargets())
	}
	cases := []struct {
		template      uint32
		tid           int8
		switchUp      bool
		references    int
		start, finish bool
	}{
		{1, 0, false, 1, true, false},
		{2, 1, true, 1, false, true},
		{3, 2, false, 1, true, true},
	}
	for _, c := range cases {
		fr, ok := d.Parse(mandatoryOnly(c.start, c.finish, c.template, 11))
		if !ok || fr.TID != c.tid || fr.Switch != c.switchUp || fr.References != c.references ||
			fr.StartOfFrame != c.start || fr.EndOfFrame != c.finish || fr.StructureAttached {
			t.Errorf("template %d: %+v ok=%v", c.template, fr, ok)
		}
	}
	if _, ok := d.Parse(mandatoryOnly(true, true, 9, 1)); ok {
		t.Fatal("unknown template accepted")
	}
	// A malformed structure leaves the good one in place.
	bad := l1t3Structure(0, 12)
	if _, ok := d.Parse(bad[:6]); ok {
		t.Fatal("truncated structure accepted")
	}
	if fr, ok := d.Parse(mandatoryOnly(true, true, 3, 13)); !ok || fr.TID != 2 {
		t.Fatalf("structure lost after a malformed one: %+v", fr)
	}
}

func TestDependencyDescriptorCustomFields(t *testing.T) {
	var d DDParser
	if _, ok := d.Parse(l1t3Structure(0, 1)); !ok {
		t.Fatal("structure rejected")
	}
	w := &bitWriter{}
	w.put(1, 1)
	w.put(0, 1)
	w.put(3, 6) // S0T2 template
	w.put(2, 16)
	w.put(0, 1) // no structure
	w.put(0, 1) // no active targets
	w.put(1, 1) // custom dtis
	w.put(1, 1) // custom fdiffs
	w.put(0, 1) // custom chains
	w.put(0, 2) // DT0 not present
	w.put(0, 2) // DT1 not present
	w.put(2, 2) // DT2 switch
	w.put(1, 2) // one fdiff of 4 bits
	w.put(0, 4) // fdiff 1
	w.put(1, 2) // another
	w.put(3, 4) // fdiff 4
	w.put(0, 2) // end of fdiffs
	fr, ok := d.Parse(w.b)
	if !ok || fr.TID != 2 || !fr.Switch || fr.References != 2 {
		t.Fatalf("custom descriptor: %+v ok=%v", fr, ok)
	}
}

func TestNonSymmetricValues(t *testing.T) {
	// ns(5): w=3, m=3: values 0..2 take 2 bits, 3 and 4 take 3 bits.
	for v, bits := range map[uint32]struct {
		code uint32
		n    int
	}{0: {0, 2}, 2: {2, 2}, 3: {6, 3}, 4: {7, 3}} {
		w := &bitWriter{}
		w.put(bits.code, bits.n)
		r := bitReader{b: w.b}
		if got := r.ns(5); got != v || r.err {
			t.Errorf("ns(5) of %b: %d", bits.code, got)
		}
	}
}

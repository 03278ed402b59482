package media

// ParseAV1 reads the AV1 RTP aggregation header (AV1 RTP specification section 4.4):
//
//	Z|Y|W W|N|- - -    Z: the first OBU element continues one from the previous packet,
//	                   Y: the last one continues in the next packet, N: first packet of a coded
//	                   video sequence (a keyframe)
//
// Layer ids, frame boundaries and switch points of AV1 come from the Dependency Descriptor header
// extension: see DDParser.
func ParseAV1(p []byte) (Flags, bool) {
	f := NoLayers()
	if len(p) < 1 {
		return f, false
	}
	f.Start = p[0]&0x80 == 0
	f.Keyframe = p[0]&0x08 != 0
	if f.Keyframe && !f.Start {
		return f, false // a new coded video sequence cannot continue an OBU
	}
	if f.Keyframe {
		f.SwitchUp, f.SpatialSwitch = true, true
	}
	return f, true
}

// Decode target indications of the Dependency Descriptor.
const (
	DTINotPresent  = 0
	DTIDiscardable = 1
	DTISwitch      = 2
	DTIRequired    = 3
)

// Limits of the Dependency Descriptor structure strata keeps (the specification's maxima, except
// for the frame differences per template, which it does not bound).
const (
	ddMaxTemplates     = 64
	ddMaxDecodeTargets = 32
	ddMaxFdiffs        = 16
)

// DDParser parses the AV1 Dependency Descriptor RTP header extension (AV1 RTP specification,
// appendix A). Most descriptors only name a template of the template dependency structure that
// came with the last keyframe, so the parser keeps that structure; one DDParser per stream. It
// uses fixed arrays and allocates nothing.
type DDParser struct {
	hasStructure   bool
	templateOffset uint8
	templates      int
	decodeTargets  int
	chains         int
	spatial        [ddMaxTemplates]int8
	temporal       [ddMaxTemplates]int8
	dtis           [ddMaxTemplates][ddMaxDecodeTargets]uint8
	fdiffCount     [ddMaxTemplates]uint8
	dtSpatial      [ddMaxDecodeTargets]int8
	dtTemporal     [ddMaxDecodeTargets]int8
	// scratch for a structure being parsed, so a malformed one leaves the last good one in place
	next *DDParser
}

// DDFrame is what one Dependency Descriptor says about its packet.
type DDFrame struct {
	StartOfFrame, EndOfFrame bool
	FrameNumber              uint16
	SID, TID                 int8
	// StructureAttached: the descriptor carried a template dependency structure (keyframes do).
	StructureAttached bool
	// Switch: the frame is a switch point for the decode target of its own layers.
	Switch bool
	// References is the number of frames this one depends on (0: decodable alone).
	References int
}

// Parse reads one descriptor. ok is false when it is malformed or names a template strata has not
// seen (a structure lost with its keyframe); the packet's layers are then unknown.
func (d *DDParser) Parse(b []byte) (DDFrame, bool) {
	var fr DDFrame
	r := bitReader{b: b}
	fr.StartOfFrame = r.bit()
	fr.EndOfFrame = r.bit()
	templateID := uint8(r.bits(6))
	fr.FrameNumber = uint16(r.bits(16))
	if r.err {
		return fr, false
	}
	var customDTIs, customFdiffs, customChains bool
	if len(b) > 3 {
		structurePresent := r.bit()
		activePresent := r.bit()
		customDTIs, customFdiffs, customChains = r.bit(), r.bit(), r.bit()
		if structurePresent {
			if !d.parseStructure(&r) {
				return fr, false
			}
			fr.StructureAttached = true
		}
		if activePresent && d.hasStructure {
			r.bits(d.decodeTargets) // active decode targets: all targets are kept available
		}
	}
	if !d.hasStructure || r.err {
		return fr, false
	}
	idx := int((templateID + 64 - d.templateOffset) % 64)
	if idx >= d.templates {
		return fr, false
	}
	fr.SID, fr.TID = d.spatial[idx], d.temporal[idx]
	var dtis [ddMaxDecodeTargets]uint8
	if customDTIs {
		for i := 0; i < d.decodeTargets; i++ {
			dtis[i] = uint8(r.bits(2))
		}
	} else {
		dtis = d.dtis[idx]
	}
	fr.References = int(d.fdiffCount[idx])
	if customFdiffs {
		fr.References = 0
		for size := r.bits(2); size != 0 && !r.err; size = r.bits(2) {
			r.bits(4 * int(size))
			fr.References++
		}
	}
	if customChains {
		r.bits(8 * d.chains)
	}
	if r.err {
		return fr, false
	}
	for dt := 0; dt < d.decodeTargets; dt++ {
		if d.dtSpatial[dt] == fr.SID && d.dtTemporal[dt] == fr.TID && dtis[dt] == DTISwitch {
			fr.Switch = true
		}
	}
	return fr, true
}

// Flags turns a parsed descriptor into forwarding flags (on top of the aggregation header's).
func (fr *DDFrame) Flags(f *Flags) {
	f.SID, f.TID = fr.SID, fr.TID
	f.Start, f.End = fr.StartOfFrame, fr.EndOfFrame
	keyframe := fr.StartOfFrame && fr.SID == 0 && (fr.StructureAttached || fr.References == 0)
	f.Keyframe = f.Keyframe || keyframe
	f.SwitchUp = fr.Switch || f.Keyframe
	f.SpatialSwitch = fr.StartOfFrame && (fr.Switch || f.Keyframe)
}

// DecodeTargets returns how many decode targets the current structure has (0 without one).
func (d *DDParser) DecodeTargets() int {
	if !d.hasStructure {
		return 0
	}
	return d.decodeTargets
}

func (d *DDParser) parseStructure(r *bitReader) bool {
	if d.next == nil {
		d.next = &DDParser{}
	}
	n := d.next
	n.templateOffset = uint8(r.bits(6))
	n.decodeTargets = int(r.bits(5)) + 1
	if !n.parseTemplateLayers(r) || !n.parseDTIs(r) || !n.parseFdiffs(r) || !n.parseChains(r) {
		return false
	}
	n.decodeTargetLayers()
	if r.bit() { // render resolutions: two 16-bit values per spatial layer
		maxSpatial := int8(0)
		for i := 0; i < n.templates; i++ {
			maxSpatial = max(maxSpatial, n.spatial[i])
		}
		r.bits(16)
		r.bits(16)
		for s := int8(0); s < maxSpatial; s++ {
			r.bits(16)
			r.bits(16)
		}
	}
	if r.err {
		return false
	}
	next := d.next
	*d = *next
	d.next = next
	d.hasStructure = true
	return true
}

func (d *DDParser) parseTemplateLayers(r *bitReader) bool {
	var spatialID, temporalID int8
	d.templates = 0
	for {
		if d.templates >= ddMaxTemplates {
			return false
		}
		d.spatial[d.templates], d.temporal[d.templates] = spatialID, temporalID
		d.templates++
		switch r.bits(2) {
		case 1:
			temporalID++
		case 2:
			temporalID = 0
			spatialID++
		case 3:
			return !r.err && spatialID < 8 && temporalID < 8
		}
		if r.err || spatialID >= 8 || temporalID >= 8 {
			return false
		}
	}
}

func (d *DDParser) parseDTIs(r *bitReader) bool {
	for t := 0; t < d.templates; t++ {
		for dt := 0; dt < d.decodeTargets; dt++ {
			d.dtis[t][dt] = uint8(r.bits(2))
		}
	}
	return !r.err
}

func (d *DDParser) parseFdiffs(r *bitReader) bool {
	for t := 0; t < d.templates; t++ {
		n := 0
		for r.bit() {
			r.bits(4)
			n++
			if n > ddMaxFdiffs || r.err {
				return false
			}
		}
		d.fdiffCount[t] = uint8(n)
	}
	return !r.err
}

func (d *DDParser) parseChains(r *bitReader) bool {
	d.chains = int(r.ns(uint32(d.decodeTargets) + 1))
	if d.chains == 0 {
		return !r.err
	}
	for dt := 0; dt < d.decodeTargets; dt++ {
		r.ns(uint32(d.chains)) // decode_target_protected_by
	}
	for t := 0; t < d.templates; t++ {
		for c := 0; c < d.chains; c++ {
			r.bits(4)
		}
	}
	return !r.err
}

// decodeTargetLayers derives each decode target's highest spatial and temporal id.
func (d *DDParser) decodeTargetLayers() {
	for dt := 0; dt < d.decodeTargets; dt++ {
		var s, t int8
		for i := 0; i < d.templates; i++ {
			if d.dtis[i][dt] != DTINotPresent {
				s, t = max(s, d.spatial[i]), max(t, d.temporal[i])
			}
		}
		d.dtSpatial[dt], d.dtTemporal[dt] = s, t
	}
}

// bitReader reads big-endian bit fields; reading past the end sets err and returns zeros.
type bitReader struct {
	b   []byte
	pos int
	err bool
}

func (r *bitReader) bit() bool { return r.bits(1) == 1 }

func (r *bitReader) bits(n int) uint32 {
	var v uint32
	for range n {
		if r.pos >= 8*len(r.b) {
			r.err = true
			return 0
		}
		v = v<<1 | uint32(r.b[r.pos/8]>>(7-r.pos%8))&1
		r.pos++
	}
	return v
}

// ns reads a non-symmetric unsigned value in [0, n) (AV1 specification 4.10.7).
func (r *bitReader) ns(n uint32) uint32 {
	if n <= 1 {
		return 0
	}
	w := 0
	for x := n; x != 0; x >>= 1 {
		w++
	}
	m := uint32(1)<<w - n
	v := r.bits(w - 1)
	if v < m {
		return v
	}
	return v<<1 - m + r.bits(1)
}

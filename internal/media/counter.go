package media

// counter maps the values one source numbers its items with (RTP sequence numbers, picture ids,
// TL0PICIDX) to output values that leave no hole where strata dropped items and continue without a
// jump when the source changes. Holes the source itself left (losses) are kept, so the receiver
// still asks for them. Late (reordered) items get the output they would have had in order, thanks to
// a short history of the drops; items older than that history, or older than the last source
// switch, are refused. Values are bits wide and wrap.
type counter struct {
	mask, half uint32
	started    bool
	resync     bool
	base       uint32 // first input value after the last switch
	lastIn     uint32
	lastOut    uint32
	offset     uint32
	// drops records runs of dropped input values [from, to] with the offset before them, newest
	// last, in a ring; lost says older runs were forgotten.
	drops [32]dropRun
	n     int
	head  int
	lost  bool
}

// dropRun is a run of dropped input values [from, to], or, with from = to + 1, a value strata
// inserted into the output after input to (padding).
type dropRun struct{ from, to, offsetBefore uint32 }

func newCounter(bits uint) counter {
	return counter{mask: 1<<bits - 1, half: 1 << (bits - 1)}
}

// switchSource makes the next forwarded item continue from the last output value.
func (c *counter) switchSource() { c.resync = true }

func (c *counter) newer(a, b uint32) bool {
	d := (a - b) & c.mask
	return d != 0 && d < c.half
}

// forward maps an input value; ok is false for values that must be dropped (too old).
func (c *counter) forward(in uint32) (out uint32, ok bool) {
	in &= c.mask
	switch {
	case !c.started:
		c.started, c.resync = true, false
		c.base, c.lastIn, c.lastOut = in, in, in
		return in, true
	case c.resync:
		c.resync = false
		c.offset = (c.lastOut + 1 - in) & c.mask
		c.base, c.lastIn = in, in
		c.n, c.head, c.lost = 0, 0, false
		c.lastOut = (in + c.offset) & c.mask
		return c.lastOut, true
	case c.newer(in, c.lastIn):
		c.lastIn = in
		out = (in + c.offset) & c.mask
		if c.newer(out, c.lastOut) {
			c.lastOut = out
		}
		return out, true
	case in == c.lastIn:
		return (in + c.offset) & c.mask, true
	}
	return c.late(in)
}

// late maps a value older than the newest one seen.
func (c *counter) late(in uint32) (uint32, bool) {
	if c.newer(c.base, in) {
		return 0, false // from before the last switch
	}
	offset := c.offset
	for k := 0; k < c.n; k++ {
		r := &c.drops[(c.head-1-k+len(c.drops))%len(c.drops)]
		if !c.newer(r.from, in) && !c.newer(in, r.to) {
			return 0, false // a value strata dropped arrives again
		}
		if !c.newer(r.from, in) {
			return (in + offset) & c.mask, true
		}
		offset = r.offsetBefore
		if k == c.n-1 && c.lost {
			return 0, false // older than the drops remembered
		}
	}
	return (in + offset) & c.mask, true
}

// insert takes the next output value for an item strata adds (padding) and returns it; later
// input values follow it. ok is false before the first item.
func (c *counter) insert() (out uint32, ok bool) {
	if !c.started {
		return 0, false
	}
	c.lastOut = (c.lastOut + 1) & c.mask
	if c.resync {
		return c.lastOut, true // the next forwarded item re-anchors after it anyway
	}
	c.record(dropRun{from: (c.lastIn + 1) & c.mask, to: c.lastIn, offsetBefore: c.offset})
	c.offset = (c.offset + 1) & c.mask
	return c.lastOut, true
}

func (c *counter) record(r dropRun) {
	c.drops[c.head] = r
	c.head = (c.head + 1) % len(c.drops)
	if c.n < len(c.drops) {
		c.n++
	} else {
		c.lost = true
	}
}

// drop removes an input value of the current source from the output numbering.
func (c *counter) drop(in uint32) {
	in &= c.mask
	if !c.started || c.resync || !c.newer(in, c.lastIn) {
		return
	}
	if c.n > 0 {
		last := &c.drops[(c.head-1+len(c.drops))%len(c.drops)]
		if (last.to+1)&c.mask == in && c.lastIn == last.to && last.from != (last.to+1)&c.mask {
			last.to = in
			c.offset = (c.offset - 1) & c.mask
			c.lastIn = in
			return
		}
	}
	c.record(dropRun{from: in, to: in, offsetBefore: c.offset})
	c.offset = (c.offset - 1) & c.mask
	c.lastIn = in
}

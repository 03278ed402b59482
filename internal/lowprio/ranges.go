package lowprio

// span is a run [start, end) of stream offsets or sequence numbers.
type span struct{ start, end uint64 }

// maxSpans bounds the runs a receiver tracks above its in-order point; a message that would need
// more is dropped (the sender retransmits it), so out-of-order state stays bounded.
const maxSpans = 64

// spans is a sorted list of disjoint, non-adjacent runs in a fixed array: no allocation.
type spans struct {
	n int
	s [maxSpans]span
}

// contains reports whether [a, b) lies within one run.
func (l *spans) contains(a, b uint64) bool {
	for i := range l.n {
		if l.s[i].start <= a && b <= l.s[i].end {
			return true
		}
	}
	return false
}

// add merges [a, b) into the list; it reports false (and changes nothing) when the list is full.
func (l *spans) add(a, b uint64) bool {
	if a >= b {
		return true
	}
	i := 0
	for i < l.n && l.s[i].end < a {
		i++
	}
	j := i
	for j < l.n && l.s[j].start <= b {
		a, b = min(a, l.s[j].start), max(b, l.s[j].end)
		j++
	}
	if i == j { // no overlap: insert at i
		if l.n == maxSpans {
			return false
		}
		copy(l.s[i+1:l.n+1], l.s[i:l.n])
		l.n++
	} else { // runs i..j-1 merge into i
		copy(l.s[i+1:], l.s[j:l.n])
		l.n -= j - i - 1
	}
	l.s[i] = span{a, b}
	return true
}

// advance moves the in-order point p over a run that starts at or before it and drops that run.
func (l *spans) advance(p uint64) uint64 {
	for l.n > 0 && l.s[0].start <= p {
		p = max(p, l.s[0].end)
		copy(l.s[:], l.s[1:l.n])
		l.n--
	}
	return p
}

// last is the end of the highest run, or 0.
func (l *spans) last() uint64 {
	if l.n == 0 {
		return 0
	}
	return l.s[l.n-1].end
}

package audio

// Janus's defaults for talking detection.
const (
	DefaultAudioActivePackets = 100 // packets per decision: 2 s of 20 ms packets
	DefaultAudioLevelAverage  = 25  // talking when the average level is below this (dBov, 0 loudest, 127 silent)
)

// TalkDetector decides whether a participant talks from the RFC 6464 audio levels of its packets,
// with Janus's rule: sum the levels of Packets packets, then the participant talks if their average
// is below Average (levels are -dBov: lower is louder) and is silent otherwise; the count then
// restarts. A decision is made every Packets packets and only a change is an event. Pure and not
// safe for concurrent use.
type TalkDetector struct {
	packets, average int
	n, sum           int
	talking          bool
}

// NewTalkDetector returns a detector deciding every packets packets against average; zero or
// negative values take Janus's defaults (as Janus does for invalid ones).
func NewTalkDetector(packets, average int) *TalkDetector {
	if packets <= 0 {
		packets = DefaultAudioActivePackets
	}
	if average <= 0 {
		average = DefaultAudioLevelAverage
	}
	return &TalkDetector{packets: packets, average: average}
}

// Observe takes one packet's audio level (0..127; larger values count as 127, silence) and reports
// whether the participant talks, and whether that just changed.
func (d *TalkDetector) Observe(level uint8) (talking, changed bool) {
	d.sum += int(min(level, 127))
	d.n++
	if d.n < d.packets {
		return d.talking, false
	}
	// Janus compares the float average; sum < average*n is the same test in integers.
	now := d.sum < d.average*d.n
	d.n, d.sum = 0, 0
	changed = now != d.talking
	d.talking = now
	return now, changed
}

// Talking is the last decision.
func (d *TalkDetector) Talking() bool { return d.talking }

// Reset forgets the current window and the decision (a participant muted or moved to another room).
func (d *TalkDetector) Reset() { *d = TalkDetector{packets: d.packets, average: d.average} }

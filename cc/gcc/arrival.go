package gcc

import "time"

// Arrival-time grouping, shared by both variants (draft-ietf-rmcat-gcc-02 §5.2; libwebrtc's
// InterArrival behaves the same way): packets sent within BurstTime of a group's first packet form
// one group, and a packet that arrives within BurstTime of the previous one while its inter-arrival
// time is shorter than its inter-departure time (a burst released by a queue) joins the current
// group too. Deltas are taken between the last packets of consecutive groups.

const (
	// maxBurstDuration bounds a burst-extended group (libwebrtc: 100 ms).
	maxBurstDuration = 100 * time.Millisecond
	// arrivalJumpReset resets grouping when the arrival clock jumps by more than this relative to
	// the send clock (libwebrtc: 3 s), as after a receiver restart.
	arrivalJumpReset = 3 * time.Second
	// reorderResetCount resets grouping after this many consecutive reordered groups.
	reorderResetCount = 3
)

type packetGroup struct {
	firstSend, lastSend       time.Duration
	firstArrival, lastArrival time.Duration
	size                      int
	valid                     bool
}

// groupDelta is what a completed pair of groups yields.
type groupDelta struct {
	sendDelta, arrivalDelta time.Duration
	// arrival is the last arrival of the newer group, send its last send time.
	arrival, send time.Duration
	size          int
}

type interArrival struct {
	burst     time.Duration
	cur, prev packetGroup
	reordered int
}

func (a *interArrival) reset() { a.cur, a.prev, a.reordered = packetGroup{}, packetGroup{}, 0 }

func (a *interArrival) belongsToCurrent(send, arrival time.Duration) bool {
	if send-a.cur.firstSend <= a.burst {
		return true
	}
	arrivalDelta := arrival - a.cur.lastArrival
	sendDelta := send - a.cur.lastSend
	return arrivalDelta-sendDelta < 0 && arrivalDelta <= a.burst &&
		arrival-a.cur.firstArrival < maxBurstDuration
}

// add feeds one received packet (in arrival order) and returns the deltas when it closes a group
// that has a predecessor.
func (a *interArrival) add(send, arrival time.Duration, size int) (groupDelta, bool) {
	if !a.cur.valid {
		a.cur = packetGroup{send, send, arrival, arrival, size, true}
		return groupDelta{}, false
	}
	if send < a.cur.firstSend {
		return groupDelta{}, false // sent before the current group: a late, reordered packet
	}
	if a.belongsToCurrent(send, arrival) {
		a.cur.lastSend = max(a.cur.lastSend, send)
		a.cur.lastArrival = max(a.cur.lastArrival, arrival)
		a.cur.size += size
		return groupDelta{}, false
	}
	var d groupDelta
	ok := false
	if a.prev.valid {
		d = groupDelta{
			sendDelta:    a.cur.lastSend - a.prev.lastSend,
			arrivalDelta: a.cur.lastArrival - a.prev.lastArrival,
			arrival:      a.cur.lastArrival,
			send:         a.cur.lastSend,
			size:         a.cur.size,
		}
		switch {
		case d.arrivalDelta-d.sendDelta >= arrivalJumpReset || d.arrivalDelta-d.sendDelta <= -arrivalJumpReset:
			a.reset()
			a.cur = packetGroup{send, send, arrival, arrival, size, true}
			return groupDelta{}, false
		case d.arrivalDelta < 0:
			a.reordered++
			if a.reordered >= reorderResetCount {
				a.reset()
				a.cur = packetGroup{send, send, arrival, arrival, size, true}
				return groupDelta{}, false
			}
		default:
			a.reordered = 0
			ok = true
		}
	}
	a.prev = a.cur
	a.cur = packetGroup{send, send, arrival, arrival, size, true}
	return d, ok
}

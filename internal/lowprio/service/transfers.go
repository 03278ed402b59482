package service

import (
	"context"
	"sync"
	"time"

	"github.com/strata-rtc/strata/cc"
)

// keepFinished is how many ended transfers a PeerConnection's handle_info still shows.
const keepFinished = 8

// Transfer states in handle_info.
const (
	stateRunning = "running"
	stateDone    = "done"
	stateFailed  = "failed"
	stateRefused = "refused"
)

// peerState is the low-priority side of one PeerConnection: its running transfers (bounded by
// max_transfers) and the last ones that ended, for handle_info. ctx ends with the PeerConnection.
type peerState struct {
	ctx    context.Context
	cancel context.CancelFunc

	mu        sync.Mutex
	running   int
	refused   uint64
	transfers []*transfer // running, then the newest keepFinished ended ones
}

// transfer is one channel's transfer as handle_info shows it.
type transfer struct {
	label     string
	name      string
	direction string // get: strata sends; put: strata receives
	started   time.Time

	mu       sync.Mutex
	bytes    int64
	size     int64 // the whole transfer's length when known (a file, gen:<bytes>), else -1
	rate     cc.Bitrate
	rtt      time.Duration
	queueing time.Duration
	cwnd     int
	capRate  cc.Bitrate
	state    string
	err      string
	ended    time.Time
}

// TransferInfo is one transfer in handle_info (webrtc.lowprio.transfers).
type TransferInfo struct {
	Name      string  `json:"name"`
	Direction string  `json:"direction"`
	State     string  `json:"state"`
	Error     string  `json:"error,omitempty"`
	Bytes     int64   `json:"bytes"`
	Size      int64   `json:"size,omitempty"`
	Rate      int64   `json:"rate_bps"`
	RTTMs     float64 `json:"rtt_ms,omitempty"`
	QueueMs   float64 `json:"queuing_delay_ms,omitempty"`
	Cwnd      int     `json:"cwnd_bytes,omitempty"`
	CapRate   int64   `json:"cap_bps,omitempty"`
	Seconds   float64 `json:"seconds"`
	StartedUs int64   `json:"started"`
}

// Info is the `lowprio` part of handle_info's webrtc section.
type Info struct {
	Running   int            `json:"running"`
	Refused   uint64         `json:"refused"`
	Transfers []TransferInfo `json:"transfers"`
}

func newPeerState(parent context.Context) *peerState {
	ctx, cancel := context.WithCancel(parent)
	return &peerState{ctx: ctx, cancel: cancel}
}

// admit starts t unless max transfers are running already.
func (ps *peerState) admit(t *transfer, max int) bool {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if ps.running >= max {
		return false
	}
	ps.running++
	ps.transfers = append(ps.transfers, t)
	return true
}

// refuse records a transfer that never started, and why.
func (ps *peerState) refuse(t *transfer, err error) {
	t.end(stateRefused, err)
	ps.mu.Lock()
	defer ps.mu.Unlock()
	ps.refused++
	ps.transfers = append(ps.transfers, t)
	ps.trimLocked()
}

// finish records how a running transfer ended; refused says it never started (its file could
// not be opened, say).
func (ps *peerState) finish(t *transfer, err error, refused bool) {
	state := stateDone
	switch {
	case refused:
		state = stateRefused
	case err != nil:
		state = stateFailed
	}
	t.end(state, err)
	ps.mu.Lock()
	defer ps.mu.Unlock()
	ps.running--
	if refused {
		ps.refused++
	}
	ps.trimLocked()
}

// trimLocked forgets the oldest ended transfers beyond keepFinished.
func (ps *peerState) trimLocked() {
	ended := 0
	for i := len(ps.transfers) - 1; i >= 0; i-- {
		if ps.transfers[i].isEnded() {
			ended++
			if ended > keepFinished {
				ps.transfers = append(ps.transfers[:i], ps.transfers[i+1:]...)
			}
		}
	}
}

func (t *transfer) end(state string, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.state, t.ended = state, time.Now()
	if err != nil {
		t.err = err.Error()
	}
}

func (t *transfer) isEnded() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return !t.ended.IsZero()
}

// info is the snapshot handle_info shows.
func (ps *peerState) info() any {
	ps.mu.Lock()
	out := Info{Running: ps.running, Refused: ps.refused, Transfers: make([]TransferInfo, 0, len(ps.transfers))}
	ts := append([]*transfer(nil), ps.transfers...)
	ps.mu.Unlock()
	for _, t := range ts {
		out.Transfers = append(out.Transfers, t.info())
	}
	return out
}

func (t *transfer) info() TransferInfo {
	t.mu.Lock()
	defer t.mu.Unlock()
	end := t.ended
	if end.IsZero() {
		end = time.Now()
	}
	return TransferInfo{
		Name: t.name, Direction: t.direction, State: t.state, Error: t.err,
		Bytes: t.bytes, Size: max(t.size, 0), Rate: int64(t.rate),
		RTTMs: ms(t.rtt), QueueMs: ms(t.queueing), Cwnd: t.cwnd, CapRate: int64(t.capRate),
		Seconds: end.Sub(t.started).Seconds(), StartedUs: t.started.UnixMicro(),
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

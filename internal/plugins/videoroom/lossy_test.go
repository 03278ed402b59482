package videoroom_test

import (
	"math/rand/v2"
	"sync"
	"sync/atomic"

	"github.com/pion/interceptor"
)

// randomLoss is an interceptor for a test client that drops a set fraction of the RTP packets it
// receives, at random, before anything else of the client sees them (installed innermost): the
// random loss of a faulty link, which unlike a drop-tail queue comes without queueing delay. The
// client's transport-wide feedback reports the dropped packets lost and its NACK generator asks
// for them, as over a real lossy link.
type randomLoss struct {
	interceptor.NoOp
	loss    atomic.Uint64 // the fraction dropped, in millionths
	dropped atomic.Uint64
	mu      sync.Mutex
	rng     *rand.Rand
}

func newRandomLoss() *randomLoss { return &randomLoss{rng: rand.New(rand.NewPCG(1, 2))} }

// setLoss sets the fraction of received RTP packets dropped (0 turns loss off).
func (l *randomLoss) setLoss(p float64) { l.loss.Store(uint64(p * 1e6)) }

// NewInterceptor lets one randomLoss serve as the factory of its client's only PeerConnection.
func (l *randomLoss) NewInterceptor(string) (interceptor.Interceptor, error) { return l, nil }

func (l *randomLoss) drop() bool {
	p := float64(l.loss.Load()) / 1e6
	if p <= 0 {
		return false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.rng.Float64() < p {
		l.dropped.Add(1)
		return true
	}
	return false
}

// BindRemoteStream drops packets of every received stream.
func (l *randomLoss) BindRemoteStream(_ *interceptor.StreamInfo, reader interceptor.RTPReader) interceptor.RTPReader {
	return interceptor.RTPReaderFunc(func(b []byte, a interceptor.Attributes) (int, interceptor.Attributes, error) {
		for {
			n, attr, err := reader.Read(b, a)
			if err != nil || !l.drop() {
				return n, attr, err
			}
		}
	})
}

package peertest

import (
	"sync"
	"testing"
	"time"

	"github.com/pion/interceptor"
	"github.com/pion/webrtc/v4"
)

// RateLimit is a client's downlink of a fixed rate: a token bucket (100 ms deep) in front of
// everything the client's PeerConnection reads, which drops what exceeds it. Put first in the
// interceptor chain, what it drops the transport-wide feedback reports lost, as a real bottleneck
// would. BPS is in bit/s.
type RateLimit struct {
	interceptor.NoOp
	BPS float64

	mu     sync.Mutex
	tokens float64
	last   time.Time
}

// NewInterceptor makes the limit its own interceptor: one per PeerConnection.
func (l *RateLimit) NewInterceptor(string) (interceptor.Interceptor, error) { return l, nil }

// BindRemoteStream drops what exceeds the rate from each incoming stream.
func (l *RateLimit) BindRemoteStream(_ *interceptor.StreamInfo, r interceptor.RTPReader) interceptor.RTPReader {
	return interceptor.RTPReaderFunc(func(b []byte, a interceptor.Attributes) (int, interceptor.Attributes, error) {
		for {
			n, attr, err := r.Read(b, a)
			if err != nil || l.admit(n) {
				return n, attr, err
			}
		}
	})
}

func (l *RateLimit) admit(n int) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := time.Now()
	depth := l.BPS / 8 / 10
	if !l.last.IsZero() {
		l.tokens = min(depth, l.tokens+now.Sub(l.last).Seconds()*l.BPS/8)
	}
	l.last = now
	if l.tokens < float64(n) {
		return false
	}
	l.tokens -= float64(n)
	return true
}

// LimitedBrowserAPI is BrowserAPI whose PeerConnections receive through limit.
func LimitedBrowserAPI(tb testing.TB, limit *RateLimit) *webrtc.API {
	tb.Helper()
	return newAPI(tb, func(me *webrtc.MediaEngine) error { return me.RegisterDefaultCodecs() }, limit)
}

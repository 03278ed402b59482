package relay

import (
	"runtime"
	"testing"
)

// Closing the Relays ends every goroutine they started: links, senders' RTCP readers, layer
// readers, the plain socket's reader and the NACK loop.
func TestCloseLeavesNoGoroutines(t *testing.T) {
	before := runtime.NumGoroutine()
	for _, tr := range []string{"srtp", "rtp"} {
		t.Run(tr, func(t *testing.T) {
			rs := newRelaysWith(t, withTransport(tr), "a", "b")
			originFeed(t, rs[0], "feed", 3)
			imp := importFeed(t, rs[1], "a", "feed")
			sink := newLayerSink()
			imp.Receivers()["v"].AddSink(sink)
			eventually(t, "the top layer on the edge", wait, func() bool { return sink.count(2) > 10 })
		}) // the subtest's cleanup closes the Relays
	}
	eventually(t, "the goroutines ending", wait, func() bool { return runtime.NumGoroutine() <= before })
}

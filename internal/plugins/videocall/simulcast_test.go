package videocall_test

import (
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/janusclient/janustest"
)

// A caller sending simulcast: the callee receives one layer, hears which in "simulcast" events,
// and set substream moves it to the lowest, whose packets then arrive.
func TestSimulcastCallerAndSubstream(t *testing.T) {
	c := janustest.StartServer(t, nil, janustest.Logger())
	alice, bob := newUser(t, c, "alice", "h", "m", "l"), newUser(t, c, "bob")
	connect(t, alice, bob)
	bob.received(50, 20*time.Second)
	ev, _ := bob.wait("simulcast")
	if ev["videocodec"] != "vp8" {
		t.Fatalf("simulcast event: %v", ev)
	}
	bob.must(map[string]any{"request": "set", "substream": 0}, nil)
	waitFor(t, "bob receiving layer 0", func() bool { return bob.lastTag.Load() == 'a' })
	// The notice of the switch to layer 0 (already the first one when bob's estimate started low,
	// as on a loaded machine).
	for last := ev["substream"]; last != float64(0); {
		if ev, _ = bob.wait("simulcast"); ev["substream"] != nil {
			last = ev["substream"]
		}
	}
	// What bob sends back to alice on her simulcast m-line is not checked here: Pion, as the test's
	// browser, takes the answer's "a=rid ... recv" lines for rids of incoming streams and drops
	// strata's single stream there ("failed Simulcast probing"), where browsers play it.
}

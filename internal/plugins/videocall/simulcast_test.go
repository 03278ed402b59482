package videocall_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/config"
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

// With callee_simulcast, a simulcast caller's call asks the callee for simulcast too: strata's
// offer receives rids l, m and h on the video m-line, and a callee that answers with them is
// received as three layers (three SSRCs on its m-line). Without it, the
// offer is Janus's: no simulcast for the callee.
func TestCalleeSimulcast(t *testing.T) {
	for _, on := range []bool{false, true} {
		t.Run(fmt.Sprint("callee_simulcast=", on), func(t *testing.T) {
			srv, c := janustest.Start(t, func(cfg *config.Config) { cfg.Plugins.VideoCall.CalleeSimulcast = on }, janustest.Logger())
			alice := newUser(t, c, "alice", "h", "m", "l")
			var rids []string
			if on {
				rids = []string{"h", "m", "l"} // the harness sends its largest frames on the first
			}
			bob := newUser(t, c, "bob", rids...)
			alice.register()
			bob.register()
			alice.must(map[string]any{"request": "call", "username": "bob"}, alice.offer())
			_, offer := bob.wait("incomingcall")
			if got := strings.Contains(offer.SDP, "a=simulcast:recv l;m;h"); got != on {
				t.Fatalf("offer to bob asks for simulcast: %v, want %v:\n%s", got, on, offer.SDP)
			}
			if !on {
				return
			}
			bob.frameBytes = layerFrameBytes
			bob.must(map[string]any{"request": "accept"}, bob.answer(offer))
			_, answer := alice.wait("accepted")
			alice.setAnswer(answer)
			alice.send()
			bob.send()
			waitFor(t, "bob's three layers at strata", func() bool { return len(video(t, srv, bob).Peers) == 3 })
			in0 := video(t, srv, bob).In.Bytes
			waitFor(t, "bob's layers to keep arriving", func() bool { return video(t, srv, bob).In.Bytes > in0 })
		})
	}
}

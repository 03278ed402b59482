package videocall_test

import (
	"strings"
	"testing"
	"time"

	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/internal/janusclient"
	"github.com/strata-rtc/strata/internal/janusclient/janustest"
)

// An ICE restart from either side of a call, as janus.js does it: `set` with restart and a new
// offer is acknowledged with "set", strata's answer (new ICE credentials) comes in an "update"
// event, and media keeps flowing both ways over the restarted transport.
func TestICERestartFromEitherSide(t *testing.T) {
	c := janustest.StartServer(t, nil, janustest.Logger())
	alice, bob := newUser(t, c, "alice"), newUser(t, c, "bob")
	connect(t, alice, bob)
	alice.received(50, 20*time.Second)
	bob.received(50, 20*time.Second)
	for _, u := range []*user{bob, alice} {
		before := iceUfrag(u.pc.RemoteDescription().SDP)
		o, err := u.pc.CreateOffer(&webrtc.OfferOptions{ICERestart: true})
		if err != nil {
			t.Fatal(err)
		}
		r, j := u.must(map[string]any{"request": "set", "restart": true}, janustest.CompleteLocal(t, u.pc, o))
		if r["event"] != "set" || j != nil {
			t.Fatalf("%s set restart: %v %+v", u.name, r, j)
		}
		_, answer := u.wait("update")
		u.setAnswer(answer)
		if after := iceUfrag(answer.SDP); after == "" || after == before {
			t.Fatalf("%s: strata's ICE ufrag %q after the restart, %q before", u.name, after, before)
		}
		alice.received(50, 20*time.Second)
		bob.received(50, 20*time.Second)
	}
	// restart without an offer is ignored, as in Janus: a plain "set", no update.
	r, _ := alice.must(map[string]any{"request": "set", "restart": true}, nil)
	if r["event"] != "set" {
		t.Fatalf("set restart without SDP: %v", r)
	}
	// An answer strata did not ask for is refused by the core, as in Janus (469).
	_, _, err := bob.request(map[string]any{"request": "set"}, &janusclient.JSEP{Type: "answer", SDP: bob.pc.LocalDescription().SDP})
	janustest.WantCode(t, err, 469)
	alice.received(50, 10*time.Second)
}

func iceUfrag(sdp string) string {
	for _, line := range strings.Split(sdp, "\r\n") {
		if v, ok := strings.CutPrefix(line, "a=ice-ufrag:"); ok {
			return v
		}
	}
	return ""
}

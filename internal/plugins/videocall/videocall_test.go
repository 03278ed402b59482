package videocall_test

import (
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/janusclient"
	"github.com/strata-rtc/strata/internal/janusclient/janustest"
	"github.com/strata-rtc/strata/internal/plugins/videocall"
)

func TestCallRelaysMediaBothWays(t *testing.T) {
	c := janustest.StartServer(t, nil, janustest.Logger())
	alice, bob := newUser(t, c, "alice"), newUser(t, c, "bob")
	connect(t, alice, bob)
	aa, av := alice.received(100, 20*time.Second)
	ba, bv := bob.received(100, 20*time.Second)
	t.Logf("alice received %d audio, %d video; bob %d audio, %d video", aa, av, ba, bv)

	r, _ := alice.must(map[string]any{"request": "list"}, nil)
	if l, _ := r["list"].([]any); len(l) != 2 || l[0] != "alice" || l[1] != "bob" {
		t.Fatalf("list: %v", r)
	}

	// alice stops sending audio to bob: bob's audio stops, his video goes on.
	r, _ = alice.must(map[string]any{"request": "set", "audio": false, "bitrate": 128000}, nil)
	if r["event"] != "set" {
		t.Fatalf("set: %v", r)
	}
	waitFor(t, "alice's REMB of 128 kbit/s", func() bool { return alice.remb.Load() == 128000 })
	time.Sleep(300 * time.Millisecond) // packets already on the way
	a0 := bob.got[0].Load()
	bob.received0Audio(a0)
	alice.must(map[string]any{"request": "set", "audio": true}, nil)
	bob.received(50, 10*time.Second)

	// The same for video, in the other direction.
	bob.must(map[string]any{"request": "set", "video": false}, nil)
	time.Sleep(300 * time.Millisecond)
	v0 := alice.got[1].Load()
	time.Sleep(time.Second)
	if got := alice.got[1].Load() - v0; got > 0 {
		t.Fatalf("alice received %d video packets with bob's video off", got)
	}
	bob.must(map[string]any{"request": "set", "video": true}, nil)
	alice.received(50, 10*time.Second)
}

// received0Audio checks that no audio arrives for a second (while video does).
func (u *user) received0Audio(from int64) {
	u.t.Helper()
	v0 := u.got[1].Load()
	time.Sleep(time.Second)
	if got := u.got[0].Load() - from; got > 0 {
		u.t.Fatalf("%s received %d audio packets with the peer's audio off", u.name, got)
	}
	if u.got[1].Load() == v0 {
		u.t.Fatalf("%s's video stopped too", u.name)
	}
}

func TestHangupFromEitherSide(t *testing.T) {
	for _, callerHangsUp := range []bool{true, false} {
		name := "callee"
		if callerHangsUp {
			name = "caller"
		}
		t.Run(name, func(t *testing.T) {
			c := janustest.StartServer(t, nil, janustest.Logger())
			alice, bob := newUser(t, c, "alice"), newUser(t, c, "bob")
			connect(t, alice, bob)
			bob.received(20, 20*time.Second)
			who, other := alice, bob
			if !callerHangsUp {
				who, other = bob, alice
			}
			r, _ := who.must(map[string]any{"request": "hangup", "reason": "bye"}, nil)
			if r["event"] != "hangup" || r["reason"] != "Explicit hangup" || r["username"] != who.name {
				t.Fatalf("hangup result: %v", r)
			}
			ev, _ := other.wait("hangup")
			if ev["reason"] != "bye" || ev["username"] != who.name {
				t.Fatalf("peer's hangup event: %v", ev)
			}
			// Neither is in a call any more, and the other calls back on new PeerConnections.
			_, _, err := other.request(map[string]any{"request": "accept"}, nil)
			janustest.WantCode(t, err, videocall.ErrNoCall)
			who.renew()
			other.renew()
			dial(t, other, who)
			who.received(50, 20*time.Second)
			other.received(50, 20*time.Second)
		})
	}
}

func TestErrors(t *testing.T) {
	c := janustest.StartServer(t, nil, janustest.Logger())
	alice, bob, carol := newUser(t, c, "alice"), newUser(t, c, "bob"), newUser(t, c, "carol")
	code := func(u *user, body map[string]any, want int) {
		t.Helper()
		_, _, err := u.request(body, nil)
		janustest.WantCode(t, err, want)
	}
	code(alice, map[string]any{"request": "call", "username": "bob"}, videocall.ErrRegisterFirst)
	code(alice, map[string]any{"request": "fly"}, videocall.ErrInvalidRequest)
	code(alice, map[string]any{"username": "x"}, videocall.ErrMissingElement)
	code(alice, map[string]any{"request": 5}, videocall.ErrInvalidElement)
	code(alice, map[string]any{"request": "register"}, videocall.ErrMissingElement)
	code(alice, map[string]any{"request": "register", "username": 7}, videocall.ErrInvalidElement)
	alice.register()
	code(alice, map[string]any{"request": "register", "username": "other"}, videocall.ErrAlreadyRegistered)
	code(bob, map[string]any{"request": "register", "username": "alice"}, videocall.ErrUsernameTaken)
	code(alice, map[string]any{"request": "call", "username": "alice"}, videocall.ErrUseEchoTest)
	code(alice, map[string]any{"request": "call", "username": "nobody"}, videocall.ErrNoSuchUsername)
	code(alice, map[string]any{"request": "accept"}, videocall.ErrNoCall)
	code(alice, map[string]any{"request": "set", "bitrate": -1}, videocall.ErrInvalidElement)
	code(alice, map[string]any{"request": "set", "substream": 3}, videocall.ErrInvalidElement)
	bob.register()
	code(alice, map[string]any{"request": "call", "username": "bob"}, videocall.ErrMissingSDP)
	// An offer Pion refuses (no ICE credentials, no fingerprint) is 483, and the next call works.
	bad := &janusclient.JSEP{Type: "offer", SDP: "v=0\r\no=- 1 1 IN IP4 0.0.0.0\r\ns=-\r\nt=0 0\r\n" +
		"m=audio 9 UDP/TLS/RTP/SAVPF 111\r\nc=IN IP4 0.0.0.0\r\na=mid:0\r\na=sendrecv\r\na=rtpmap:111 opus/48000/2\r\n"}
	_, _, err := alice.request(map[string]any{"request": "call", "username": "bob"}, bad)
	janustest.WantCode(t, err, videocall.ErrInvalidSDP)

	// alice calls bob; calling again is 480, and carol calling busy bob hears "User busy".
	dial(t, alice, bob)
	_, _, err = alice.request(map[string]any{"request": "call", "username": "bob"}, alice.offer())
	janustest.WantCode(t, err, videocall.ErrAlreadyInCall)
	carol.register()
	r, _ := carol.must(map[string]any{"request": "call", "username": "bob"}, carol.offer())
	if r["event"] != "hangup" || r["reason"] != "User busy" {
		t.Fatalf("calling a busy user: %v", r)
	}
	// The call goes on.
	bob.received(20, 10*time.Second)
}

// waitFor polls cond for up to 10 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 10 s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

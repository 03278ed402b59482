package peer

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/internal/config"
)

// stunCounter is a UDP socket on every local address that counts the STUN binding requests it
// receives: candidates pointing at 127.x.y.z on its port all land here (Linux routes 127/8 to lo).
type stunCounter struct {
	conn     *net.UDPConn
	requests atomic.Int64
}

func newSTUNCounter(t *testing.T) *stunCounter {
	t.Helper()
	conn, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4zero})
	if err != nil {
		t.Fatal(err)
	}
	s := &stunCounter{conn: conn}
	t.Cleanup(func() { _ = conn.Close() })
	go func() {
		buf := make([]byte, 1500)
		for {
			n, _, err := conn.ReadFromUDP(buf)
			if err != nil {
				return
			}
			if isBindingRequest(buf[:n]) {
				s.requests.Add(1)
			}
		}
	}()
	return s
}

// isBindingRequest: a STUN header (RFC 5389) with the Binding Request type and the magic cookie.
func isBindingRequest(b []byte) bool {
	return len(b) >= 20 && b[0] == 0 && b[1] == 1 && b[4] == 0x21 && b[5] == 0x12 && b[6] == 0xa4 && b[7] == 0x42
}

func (s *stunCounter) port() int { return s.conn.LocalAddr().(*net.UDPAddr).Port }

// floodCandidates are n host candidates at distinct loopback addresses on port.
func floodCandidates(n, port int) []webrtc.ICECandidateInit {
	out := make([]webrtc.ICECandidateInit, n)
	for i := range out {
		addr := fmt.Sprintf("127.%d.%d.%d", 1+i/62500, i/250%250, 1+i%250)
		out[i] = webrtc.ICECandidateInit{Candidate: fmt.Sprintf("candidate:%d 1 udp 2130706431 %s %d typ host", i, addr, port)}
	}
	return out
}

// answeredPeer is a Peer that has answered a client offer but whose client never connects, so
// its ICE agent keeps checking whatever remote candidates it gets.
func answeredPeer(t *testing.T, f *Factory) *Peer {
	t.Helper()
	srv := newTestPeer(t, f, Hooks{})
	c := newClient(t)
	c.addMedia(t)
	if _, err := srv.Answer(testContext(t), c.offer(t, false)); err != nil {
		t.Fatal(err)
	}
	return srv
}

// udp4Locals counts the distinct local IPv4 UDP candidates (the answer repeats them for each
// m-line): each is paired with each IPv4 remote one.
func udp4Locals(t *testing.T, p *Peer) int {
	t.Helper()
	seen := map[string]bool{}
	for line := range strings.Lines(p.PC.LocalDescription().SDP) {
		f := strings.Fields(line)
		if strings.HasPrefix(line, "a=candidate:") && len(f) > 5 && strings.EqualFold(f[2], "udp") && net.ParseIP(f[4]).To4() != nil {
			seen[f[4]+":"+f[5]] = true
		}
	}
	if len(seen) == 0 {
		t.Fatal("no local IPv4 UDP candidate")
	}
	return len(seen)
}

// The reflection amplifier of a 9,000-candidate trickle: the connectivity checks strata really
// sends to addresses the client chose are bounded by the candidate limit (Pion's agent sends at
// most 8 per pair, with no rate limit of its own).
func TestCandidateFloodSendsBoundedChecks(t *testing.T) {
	const limit = 16
	f := newTestFactory(t, testMedia(), WithLimits(Limits{RemoteCandidates: limit}))
	srv := answeredPeer(t, f)
	target := newSTUNCounter(t)
	added, refused := 0, 0
	for _, c := range floodCandidates(9000, target.port()) {
		switch err := srv.AddRemoteCandidate(c); {
		case err == nil:
			added++
		case errors.Is(err, ErrCandidateLimit):
			refused++
		default:
			t.Fatalf("AddRemoteCandidate: %v", err)
		}
	}
	if added != limit || refused != 9000-limit {
		t.Fatalf("added %d and refused %d of 9000 candidates, want %d and %d", added, refused, limit, 9000-limit)
	}
	time.Sleep(4 * time.Second) // 8 checks per pair, 200 ms apart, and then some
	got := target.requests.Load()
	bound := int64(limit * udp4Locals(t, srv) * 8)
	t.Logf("9000 trickled candidates, limit %d: %d binding requests received in 4 s (bound %d)", limit, got, bound)
	if got == 0 || got > bound {
		t.Errorf("%d binding requests reached the client's addresses, want 1…%d", got, bound)
	}
}

// Candidates in the offer count against the same limit: an offer with more is refused before Pion
// sees it, and trickles cannot add to an offer that used the limit up.
func TestOfferCandidatesCountAgainstTheLimit(t *testing.T) {
	f := newTestFactory(t, testMedia(), WithLimits(Limits{RemoteCandidates: 4}))
	srv := newTestPeer(t, f, Hooks{})
	c := newClient(t)
	c.addMedia(t)
	offer := c.offer(t, false)
	var extra strings.Builder
	for _, cand := range floodCandidates(5, 9) {
		extra.WriteString("a=" + cand.Candidate + "\r\n")
	}
	flooded := offer
	flooded.SDP = strings.Replace(offer.SDP, "a=ice-ufrag:", extra.String()+"a=ice-ufrag:", 1)
	if _, err := srv.Answer(testContext(t), flooded); !errors.Is(err, ErrCandidateLimit) {
		t.Fatalf("offer with 5 candidates, limit 4: %v, want ErrCandidateLimit", err)
	}
	if srv.PC.RemoteDescription() != nil {
		t.Fatal("the refused offer was applied")
	}
	withFour := offer
	withFour.SDP = strings.Replace(offer.SDP, "a=ice-ufrag:", strings.Join(strings.SplitAfter(extra.String(), "\r\n")[:4], "")+"a=ice-ufrag:", 1)
	if _, err := srv.Answer(testContext(t), withFour); err != nil {
		t.Fatalf("offer with 4 candidates, limit 4: %v", err)
	}
	if err := srv.AddRemoteCandidate(floodCandidates(5, 9)[0]); err != nil {
		t.Errorf("a candidate the offer had: %v, want accepted as a duplicate", err)
	}
	if err := srv.AddRemoteCandidate(floodCandidates(6, 10)[5]); !errors.Is(err, ErrCandidateLimit) {
		t.Errorf("a fifth candidate: %v, want ErrCandidateLimit", err)
	}
}

// The queue of candidates trickled before the remote description is bounded by the same limit;
// duplicates take no room.
func TestPendingCandidatesAreBounded(t *testing.T) {
	f := newTestFactory(t, testMedia(), WithLimits(Limits{RemoteCandidates: 3}))
	srv := newTestPeer(t, f, Hooks{})
	cands := floodCandidates(4, 9)
	for _, c := range append(cands[:3:3], cands[0], cands[1]) {
		if err := srv.AddRemoteCandidate(c); err != nil {
			t.Fatalf("queueing %s: %v", c.Candidate, err)
		}
	}
	if err := srv.AddRemoteCandidate(cands[3]); !errors.Is(err, ErrCandidateLimit) {
		t.Errorf("a fourth queued candidate: %v, want ErrCandidateLimit", err)
	}
	if err := srv.AddRemoteCandidate(webrtc.ICECandidateInit{Candidate: "candidate:garbage"}); err == nil {
		t.Error("an unparseable candidate was accepted")
	}
	srv.mu.Lock()
	queued := len(srv.cands.pending)
	srv.mu.Unlock()
	if queued != 3 {
		t.Errorf("%d candidates queued, want 3", queued)
	}
}

// Once ICE is connected, trickled candidates are ignored: no checks go to their addresses.
func TestCandidatesAfterICEConnectedAreIgnored(t *testing.T) {
	srv, rec, c := newPair(t)
	connect(t, srv, rec, c)
	target := newSTUNCounter(t)
	for _, cand := range floodCandidates(8, target.port()) {
		if err := srv.AddRemoteCandidate(cand); !errors.Is(err, ErrICECompleted) {
			t.Fatalf("candidate after ICE connected: %v, want ErrICECompleted", err)
		}
	}
	time.Sleep(time.Second)
	if n := target.requests.Load(); n != 0 {
		t.Errorf("%d binding requests sent to candidates that arrived after ICE connected", n)
	}
}

// A candidate naming another ICE generation's ufrag is refused (Pion would drop it with an error
// log of its own).
func TestCandidateOfAnotherGenerationIsRefused(t *testing.T) {
	f := newTestFactory(t, testMedia())
	srv := answeredPeer(t, f)
	c := webrtc.ICECandidateInit{Candidate: "candidate:1 1 udp 2130706431 127.0.0.9 9 typ host ufrag notours"}
	if err := srv.AddRemoteCandidate(c); !errors.Is(err, ErrStaleCandidate) {
		t.Errorf("candidate with a foreign ufrag: %v, want ErrStaleCandidate", err)
	}
}

// The Factory's default limit is the reference configuration's.
func TestDefaultLimitsAreTheReference(t *testing.T) {
	if got, want := DefaultLimits().RemoteCandidates, config.Default().General.Limits.RemoteCandidates; got != want {
		t.Errorf("DefaultLimits().RemoteCandidates = %d, configs/strata.yaml says %d", got, want)
	}
}

// FuzzRemoteCandidates feeds remote descriptions and trickled candidates through the limit: whatever
// the input, nothing panics and no generation holds more candidates than the limit.
func FuzzRemoteCandidates(f *testing.F) {
	f.Add("v=0\r\na=ice-ufrag:abcd\r\na=candidate:1 1 udp 2130706431 192.0.2.1 5000 typ host\r\n", "candidate:2 1 udp 1 192.0.2.2 5001 typ host ufrag abcd")
	f.Add("a=ice-ufrag:x\na=candidate:1 1 UDP 1 ::1 9 typ host\na=candidate:1 1 UDP 1 ::1 9 typ host\n", "candidate:1 1 udp 2122260223 4fd1-a2.local 54321 typ host")
	f.Add("a=candidate:garbage\r\na=ice-ufrag:", "candidate:1 1 tcp 1 10.0.0.1 9 typ srflx raddr 0.0.0.0 rport 0 tcptype passive")
	f.Add("", "")
	f.Fuzz(func(t *testing.T, sdp, cand string) {
		rc := newRemoteCandidates(2)
		if key, ufrag, err := parseCandidate(cand); err == nil {
			_ = rc.queue(webrtc.ICECandidateInit{Candidate: cand}, key)
			_, _ = rc.admit(key, ufrag)
		}
		next, err := rc.admitDescription(sdp)
		if err == nil {
			rc = next
		}
		if len(rc.applied) > 2 || len(rc.queued) > 2 || len(rc.pending) != len(rc.queued) {
			t.Fatalf("over the limit: %d applied, %d queued", len(rc.applied), len(rc.pending))
		}
	})
}

// An ICE restart (a new ufrag) starts a new generation with its own candidates; a renegotiation
// with the same ufrag keeps counting.
func TestICERestartStartsANewCandidateGeneration(t *testing.T) {
	desc := func(ufrag string, cands ...webrtc.ICECandidateInit) string {
		s := "v=0\r\nm=audio 9 UDP/TLS/RTP/SAVPF 111\r\na=ice-ufrag:" + ufrag + "\r\n"
		for _, c := range cands {
			s += "a=" + c.Candidate + "\r\n"
		}
		return s
	}
	cs := floodCandidates(4, 9)
	rc := newRemoteCandidates(2)
	next, err := rc.admitDescription(desc("one", cs[0], cs[1]))
	if err != nil {
		t.Fatal(err)
	}
	rc = next
	if _, err := rc.admitDescription(desc("one", cs[2])); !errors.Is(err, ErrCandidateLimit) {
		t.Errorf("a renegotiation adding a third candidate: %v, want ErrCandidateLimit", err)
	}
	if next, err = rc.admitDescription(desc("two", cs[2], cs[3])); err != nil {
		t.Fatalf("an ICE restart with two new candidates: %v", err)
	}
	rc = next
	key, ufrag, _ := parseCandidate(cs[0].Candidate + " ufrag one")
	if _, err := rc.admit(key, ufrag); !errors.Is(err, ErrStaleCandidate) {
		t.Errorf("a candidate of the previous generation: %v, want ErrStaleCandidate", err)
	}
}

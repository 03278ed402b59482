package gateway

import (
	"fmt"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/strata-rtc/strata/internal/config"
	"github.com/strata-rtc/strata/internal/janus"
	"github.com/strata-rtc/strata/internal/peer"
)

// limits enforces general.limits: what clients can make the gateway hold. Each refusal is a Janus
// error naming the option, and the slot is freed when the session, handle or PeerConnection goes.
type limits struct {
	config.Limits
	unlimited []netip.Prefix
	// perAddress counts live sessions by the client address that created them. Guarded by g.mu.
	perAddress map[netip.Addr]int
}

func newLimits(l config.Limits) limits {
	return limits{Limits: l, unlimited: l.UnlimitedPrefixes(), perAddress: map[netip.Addr]int{}}
}

// clientAddr reads a transport's remote address ("ip:port" or "ip"); ok is false when there is
// none (tests, in-process callers), and such sessions are only counted in the total.
func clientAddr(remote string) (netip.Addr, bool) {
	if ap, err := netip.ParseAddrPort(remote); err == nil {
		return ap.Addr().Unmap(), true
	}
	if a, err := netip.ParseAddr(remote); err == nil {
		return a.Unmap(), true
	}
	return netip.Addr{}, false
}

// perAddressKey is the address a session counts against, if sessions_per_address applies to it.
func (l *limits) perAddressKey(remote string) (netip.Addr, bool) {
	if l.SessionsPerAddress == 0 {
		return netip.Addr{}, false
	}
	a, ok := clientAddr(remote)
	if !ok {
		return a, false
	}
	for _, p := range l.unlimited {
		if p.Contains(a) {
			return a, false
		}
	}
	return a, true
}

// admitSession checks the session limits for a create from remote. Called with g.mu held, with
// live the number of sessions; on success the session is counted against its address.
func (l *limits) admitSession(live int, remote string) (netip.Addr, *janus.Error) {
	if l.Sessions > 0 && live >= l.Sessions {
		return netip.Addr{}, janus.Errorf(janus.ErrNotAcceptingSessions,
			"Not accepting new sessions: the server has its limit of %d sessions (general.limits.sessions)", l.Sessions)
	}
	a, counted := l.perAddressKey(remote)
	if !counted {
		return netip.Addr{}, nil
	}
	if l.perAddress[a] >= l.SessionsPerAddress {
		return netip.Addr{}, janus.Errorf(janus.ErrNotAcceptingSessions,
			"Not accepting new sessions: %s has its limit of %d sessions (general.limits.sessions_per_address)", a, l.SessionsPerAddress)
	}
	l.perAddress[a]++
	return a, nil
}

// releaseSession uncounts a session's address. Called with g.mu held.
func (l *limits) releaseSession(a netip.Addr) {
	if !a.IsValid() {
		return
	}
	if l.perAddress[a]--; l.perAddress[a] <= 0 {
		delete(l.perAddress, a)
	}
}

// checkOffer refuses a client offer with more m-lines than offer_media before it is even parsed
// (m-lines are the lines that start with "m="; an SDP starts with "v="), so before any plugin or
// PeerConnection sees it.
func (l *limits) checkOffer(typ, text string) *janus.Error {
	if typ != "offer" || l.OfferMedia == 0 {
		return nil
	}
	if n := strings.Count(text, "\nm="); n > l.OfferMedia {
		return janus.Errorf(janus.ErrJSEPInvalidSDP, "Invalid SDP (the offer has %d m-lines, the limit is %d: general.limits.offer_media)",
			n, l.OfferMedia)
	}
	return nil
}

// countedPeers bounds the live PeerConnections of a PeerFactory (peer_connections): a slot is
// taken when one is created and given back when it hangs up (every Peer does, once, on Close).
type countedPeers struct {
	PeerFactory
	limit int64
	live  atomic.Int64
}

// errPeerLimit is what Handle.Peer returns over the limit; plugins put it in their error text.
type errPeerLimit int64

func (e errPeerLimit) Error() string {
	return fmt.Sprintf("the server has its limit of %d PeerConnections (general.limits.peer_connections)", int64(e))
}

func (c *countedPeers) New(h peer.Hooks, opts ...peer.PeerOption) (*peer.Peer, error) {
	if c.live.Add(1) > c.limit {
		c.live.Add(-1)
		return nil, errPeerLimit(c.limit)
	}
	var once sync.Once
	release := func() { once.Do(func() { c.live.Add(-1) }) }
	hangup := h.OnHangup
	h.OnHangup = func(reason string) {
		release()
		if hangup != nil {
			hangup(reason)
		}
	}
	p, err := c.PeerFactory.New(h, opts...)
	if err != nil {
		release()
	}
	return p, err
}

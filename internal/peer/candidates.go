package peer

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/pion/ice/v4"
	"github.com/pion/webrtc/v4"
)

// Why a remote candidate was not given to ICE. The gateway tells the client which.
var (
	// ErrCandidateLimit: the PeerConnection already has its limit of remote candidates (or of
	// candidates queued before the remote description).
	ErrCandidateLimit = errors.New("peer: remote candidate limit reached")
	// ErrICECompleted: ICE is already connected, so the candidate could only make strata send
	// connectivity checks that cannot change the outcome.
	ErrICECompleted = errors.New("peer: ICE already connected, candidate ignored")
	// ErrStaleCandidate: the candidate names an ICE username fragment that is not the current
	// remote description's (an earlier ICE generation).
	ErrStaleCandidate = errors.New("peer: candidate of another ICE generation ignored")
)

// Limits bound what a client can make one PeerConnection do.
type Limits struct {
	// RemoteCandidates is the number of distinct remote transport addresses (protocol, address,
	// port) one ICE generation accepts, from remote descriptions and trickles together; trickled
	// candidates queued before the remote description count against it too. Pion's ICE agent
	// checks every remote candidate against every local one, up to 8 binding requests per pair and
	// without a per-address rate limit, so this bounds the connectivity checks a client can direct
	// at addresses of its choosing to RemoteCandidates x local candidates x 8. Must be positive.
	RemoteCandidates int
}

// DefaultLimits are the limits of a Factory without WithLimits (configs/strata.yaml's defaults).
func DefaultLimits() Limits { return Limits{RemoteCandidates: 32} }

// WithLimits sets the per-PeerConnection limits (DefaultLimits otherwise).
func WithLimits(l Limits) Option {
	return func(o *factoryOptions) { o.limits = l }
}

// candidateKey is a remote candidate's transport address: what a connectivity check is sent to.
type candidateKey struct {
	network string
	address string
	port    int
}

// remoteCandidates tracks the remote candidates of the current ICE generation. Guarded by Peer.mu.
type remoteCandidates struct {
	limit   int
	ufrags  []string // the applied remote description's ice-ufrags, the first naming the generation
	applied map[candidateKey]struct{}
	pending []webrtc.ICECandidateInit // trickled before the remote description
	queued  map[candidateKey]struct{} // the keys of pending
}

func newRemoteCandidates(limit int) remoteCandidates {
	return remoteCandidates{limit: limit, applied: map[candidateKey]struct{}{}, queued: map[candidateKey]struct{}{}}
}

// parseCandidate reads a trickled candidate: its transport address and its ufrag extension.
func parseCandidate(c string) (candidateKey, string, error) {
	cand, err := ice.UnmarshalCandidate(c)
	if err != nil {
		return candidateKey{}, "", fmt.Errorf("peer: bad candidate: %w", err)
	}
	ufrag := ""
	if ext, ok := cand.GetExtension("ufrag"); ok {
		ufrag = ext.Value
	}
	return candidateKey{cand.NetworkType().String(), cand.Address(), cand.Port()}, ufrag, nil
}

// queue keeps a candidate that arrived before the remote description. Duplicates are dropped.
func (rc *remoteCandidates) queue(c webrtc.ICECandidateInit, key candidateKey) error {
	if _, dup := rc.queued[key]; dup {
		return nil
	}
	if len(rc.queued) >= rc.limit {
		return fmt.Errorf("%w: %d candidates already wait for the remote description", ErrCandidateLimit, rc.limit)
	}
	rc.queued[key] = struct{}{}
	rc.pending = append(rc.pending, c)
	return nil
}

// admit decides whether a candidate goes to ICE now: it reports false for a duplicate (ICE has
// that address already) and an error for a candidate over the limit or of another generation.
func (rc *remoteCandidates) admit(key candidateKey, ufrag string) (bool, error) {
	if ufrag != "" && len(rc.ufrags) > 0 && !slices.Contains(rc.ufrags, ufrag) {
		return false, ErrStaleCandidate
	}
	if _, dup := rc.applied[key]; dup {
		return false, nil
	}
	if len(rc.applied) >= rc.limit {
		return false, fmt.Errorf("%w: this PeerConnection has %d remote candidates", ErrCandidateLimit, rc.limit)
	}
	rc.applied[key] = struct{}{}
	return true, nil
}

// describe reads the ice-ufrags and the candidate addresses of a remote description, with a line
// scan rather than a full SDP parse.
func describe(sdp string) ([]string, []candidateKey) {
	var ufrags []string
	var keys []candidateKey
	for line := range strings.Lines(sdp) {
		line = strings.TrimRight(line, "\r\n")
		if v, ok := strings.CutPrefix(line, "a=ice-ufrag:"); ok && !slices.Contains(ufrags, v) {
			ufrags = append(ufrags, v)
		}
		if v, ok := strings.CutPrefix(line, "a="); ok && strings.HasPrefix(v, "candidate:") {
			if key, _, err := parseCandidate(v); err == nil {
				keys = append(keys, key)
			}
		}
	}
	return ufrags, keys
}

// admitDescription checks a remote description's candidates against the limit before it is
// applied; a new first ufrag (an ICE restart) starts a new generation. It returns the generation
// to commit once the description is applied.
func (rc *remoteCandidates) admitDescription(sdp string) (remoteCandidates, error) {
	ufrags, keys := describe(sdp)
	next := *rc
	if first(ufrags) != first(rc.ufrags) {
		next.applied = map[candidateKey]struct{}{}
	} else {
		next.applied = make(map[candidateKey]struct{}, len(rc.applied)+len(keys))
		for k := range rc.applied {
			next.applied[k] = struct{}{}
		}
	}
	next.ufrags = ufrags
	for _, k := range keys {
		next.applied[k] = struct{}{}
	}
	if len(next.applied) > rc.limit {
		return *rc, fmt.Errorf("%w: the description carries %d remote candidates, the limit is %d", ErrCandidateLimit, len(next.applied), rc.limit)
	}
	return next, nil
}

func first(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}

// takePending empties the queue of candidates that waited for the remote description.
func (rc *remoteCandidates) takePending() []webrtc.ICECandidateInit {
	p := rc.pending
	rc.pending = nil
	clear(rc.queued)
	return p
}

// iceConnected reports whether ICE has a working pair, after which new remote candidates are
// ignored: a client cannot use trickle to make strata probe further addresses.
func (p *Peer) iceConnected() bool {
	switch p.PC.ICEConnectionState() {
	case webrtc.ICEConnectionStateConnected, webrtc.ICEConnectionStateCompleted:
		return true
	}
	return false
}

// addLocked gives one candidate to ICE, within the limits. Called with p.mu held and the remote
// description set.
func (p *Peer) addLocked(c webrtc.ICECandidateInit, key candidateKey, ufrag string) error {
	if p.iceConnected() {
		return ErrICECompleted
	}
	ok, err := p.cands.admit(key, ufrag)
	if !ok || err != nil {
		return err
	}
	return p.PC.AddICECandidate(c)
}

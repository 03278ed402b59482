package videoroom

import (
	"context"
	"fmt"
	"sort"
	"sync"

	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/cc"
	"github.com/strata-rtc/strata/internal/peer"
	"github.com/strata-rtc/strata/internal/plugin"
	"github.com/strata-rtc/strata/internal/sfu"
	"github.com/strata-rtc/strata/internal/sfu/policy"
)

// subscriber is a handle that receives streams of a room's publishers on one PeerConnection.
type subscriber struct {
	s          *session
	room       *room
	pvtID      uint32
	useMsid    bool
	autoupdate bool

	mu      sync.Mutex
	peer    *peer.Peer
	alloc   *sfu.Allocator
	streams []*subStream
	data    *subData // the application m-line and the feeds it relays (data.go)
	paused  bool
	up      bool
	closed  bool
	// counted: the subscriber holds one of the room's subscription slots until it closes.
	counted bool
	// queued: a renegotiation waits for the answer to the offer in flight (Janus's "updating").
	queued bool
	// clientOffer: the subscription answered the client's offer (WHEP, subanswer.go).
	clientOffer bool
}

// subStream is one m-line of a subscription, fed by one published stream.
type subStream struct {
	mid      string
	feed     *publisher
	src      *pubStream
	down     *sfu.DownTrack
	tr       *webrtc.RTPTransceiver
	send     bool
	started  bool
	max      policy.Layer
	crossref string
}

// wanted is one resolved entry of a streams array.
type wanted struct {
	feed     *publisher
	st       *pubStream
	data     *pubData // instead of st: the feed's data stream
	max      policy.Layer
	crossref string
}

// joinSubscriber handles join with ptype subscriber: it prepares an offer with the streams asked
// for, or answers the client's offer (WHEP, subanswer.go).
func (s *session) joinSubscriber(ctx context.Context, tx string, b body, jsep *plugin.JSEP) *requestError {
	id, err := b.room()
	if err != nil {
		return err
	}
	r, err := s.p.room(id)
	if err != nil {
		return err
	}
	pvt, hasPvt, err := b.uint("private_id", false)
	if err != nil {
		return err
	}
	if r.options().requirePvtID && (!hasPvt || r.byPrivateID(uint32(pvt)) == nil) {
		return errorf(ErrUnauthorized, "Unauthorized (this room requires a valid private_id)")
	}
	sub := &subscriber{s: s, room: r, pvtID: uint32(pvt), autoupdate: true}
	if v, ok, err := b.boolean("use_msid"); err != nil {
		return err
	} else if ok {
		sub.useMsid = v
	}
	if v, ok, err := b.boolean("autoupdate"); err != nil {
		return err
	} else if ok {
		sub.autoupdate = v
	}
	entries, err := streamEntries(b, "streams")
	if err != nil {
		return err
	}
	ws, err := sub.resolve(entries)
	if err != nil {
		return err
	}
	if err := s.p.importFeeds(ctx, ws); err != nil {
		return err
	}
	if err := r.addSubscription(s.p.cfg.Limits.SubscriptionsPerRoom); err != nil {
		return err
	}
	sub.counted = true
	p, perr := s.h.Peer(s.p.subscriberPeerOptions()...)
	if perr != nil {
		sub.close()
		return errorf(ErrUnknown, "No PeerConnection: %v", perr)
	}
	if err := sub.attach(p); err != nil {
		sub.close()
		return err
	}
	s.setSubscriber(sub)
	if jsep != nil && jsep.SDP != "" {
		answer, err := sub.answerOffer(ctx, jsep, ws)
		if err != nil {
			return err
		}
		s.push(tx, map[string]any{short: "attached", "room": r.id, "streams": sub.describe()}, answer)
		return nil
	}
	for _, w := range ws {
		if err := sub.addStream(w); err != nil {
			return err
		}
	}
	offer, err := sub.offer(ctx)
	if err != nil {
		return err
	}
	s.push(tx, map[string]any{short: "attached", "room": r.id, "streams": sub.describe()}, offer)
	return nil
}

// streamEntries reads a streams array; the legacy single "feed" becomes one entry.
func streamEntries(b body, key string) ([]body, *requestError) {
	entries, ok, err := b.list(key, false)
	if err != nil {
		return nil, err
	}
	if !ok {
		if !b.has("feed") {
			return nil, errorf(ErrMissingElement, "Missing mandatory element (%s)", key)
		}
		entries = []body{b}
	}
	return entries, nil
}

// resolve maps entries to published streams: a feed alone means all its streams.
func (sub *subscriber) resolve(entries []body) ([]wanted, *requestError) {
	var out []wanted
	for _, e := range entries {
		feed, _, err := e.uint("feed", true)
		if err != nil {
			return nil, err
		}
		pub := sub.room.participant(feed)
		if pub == nil || !pub.isActive() {
			return nil, errorf(ErrNoSuchFeed, "No such feed (%d)", feed)
		}
		max, err := layerCaps(e, policy.TopLayer)
		if err != nil {
			return nil, err
		}
		crossref, _, _ := e.str("crossrefid", false)
		mid, hasMid, err := e.str("mid", false)
		if err != nil {
			return nil, err
		}
		data := pub.dataStream()
		if hasMid {
			st := pub.stream(mid)
			switch {
			case st != nil:
				out = append(out, wanted{feed: pub, st: st, max: max, crossref: crossref})
			case data != nil && data.mid == mid:
				out = append(out, wanted{feed: pub, data: data})
			default:
				return nil, errorf(ErrNoSuchFeed, "No such mid '%s' in feed (%d)", mid, feed)
			}
			continue
		}
		for _, st := range pub.streamList() {
			out = append(out, wanted{feed: pub, st: st, max: max, crossref: crossref})
		}
		if data != nil {
			out = append(out, wanted{feed: pub, data: data})
		}
	}
	return out, nil
}

// layerCaps reads substream/temporal (simulcast) or spatial_layer/temporal_layer (SVC) as a cap.
func layerCaps(b body, base policy.Layer) (policy.Layer, *requestError) {
	out := base
	for _, k := range []struct {
		name    string
		spatial bool
	}{{"substream", true}, {"spatial_layer", true}, {"temporal", false}, {"temporal_layer", false}} {
		v, ok, err := b.uint(k.name, false)
		if err != nil {
			return out, err
		}
		if !ok {
			continue
		}
		if v > 2 {
			return out, errorf(ErrInvalidElement, "Invalid element (%s should be 0-2)", k.name)
		}
		if k.spatial {
			out.Spatial = int8(v)
		} else {
			out.Temporal = int8(v)
		}
	}
	return out, nil
}

// attach binds the subscriber to its PeerConnection and starts its allocator.
func (sub *subscriber) attach(p *peer.Peer) *requestError {
	var est sfu.Estimator
	var prober sfu.Prober
	if e := p.Estimator(); e != nil {
		est, prober = e, e
	}
	alloc, err := sfu.NewAllocator(sub.s.p.roomAllocator(sub.room), est, prober, sfu.WithLogger(sub.s.log),
		sfu.WithCensus(sub.s.p.census), sfu.WithSlowLink(func(estimate cc.Bitrate) { go sub.slowLink(estimate) }))
	if err != nil {
		return errorf(ErrUnknown, "Allocator: %v", err)
	}
	alloc.Start()
	// A subscriber's own channels (janus.js opens one when it answers a data m-line) carry nothing
	// to relay; they are only closed with the rest.
	p.OnDataChannel(p.TrackDataChannel)
	sub.mu.Lock()
	sub.peer, sub.alloc = p, alloc
	sub.mu.Unlock()
	return nil
}

// addStream adds an m-line carrying w to the subscription (negotiated by the next offer).
func (sub *subscriber) addStream(w wanted) *requestError {
	if w.data != nil {
		return sub.addData(w)
	}
	sub.mu.Lock()
	p, alloc := sub.peer, sub.alloc
	sub.mu.Unlock()
	ss := &subStream{feed: w.feed, src: w.st, send: true, max: w.max, crossref: w.crossref}
	streamID := "janus"
	if sub.useMsid {
		streamID = fmt.Sprintf("janus%d", w.feed.id)
	}
	dcfg := sfu.DownTrackConfig{
		ID: fmt.Sprintf("%s%d-%s", w.st.kind, w.feed.id, w.st.mid), StreamID: streamID,
		Codec: capability(w.st), RespondNACK: sub.s.p.cfg.Allocation.RespondNACK,
		OnLayerChange: func(l sfu.Layer) { sub.layerChanged(ss, l) },
	}
	sub.s.p.net.markDownTrack(&dcfg, p)
	ss.down = sfu.NewDownTrack(w.st.recv, dcfg)
	sub.s.p.net.markAudio(ss.down, w.st.kind, &dcfg)
	tr, err := sub.transceiver(p.PC, ss.down)
	if err != nil {
		return errorf(ErrUnknown, "Adding the %s stream of feed %d: %v", w.st.kind, w.feed.id, err)
	}
	if err := restrictCodecs(tr, capability(w.st)); err != nil {
		return errorf(ErrUnknown, "Codec of the %s stream of feed %d: %v", w.st.kind, w.feed.id, err)
	}
	ss.tr = tr
	go ss.down.ReadRTCP(tr.Sender())
	if w.st.kind == "video" {
		alloc.AddTrack(ss.down, sfu.TrackOptions{Max: w.max, Screen: w.st.isScreen()})
	}
	sub.mu.Lock()
	sub.streams = append(sub.streams, ss)
	sub.mu.Unlock()
	return nil
}

// offer creates the subscription's offer (initial, renegotiation, or ICE restart) and records the
// mids Pion gave the new m-lines.
func (sub *subscriber) offer(ctx context.Context, opts ...peer.NegotiateOption) (*plugin.JSEP, *requestError) {
	sub.mu.Lock()
	p := sub.peer
	sub.mu.Unlock()
	desc, err := p.Offer(ctx, opts...)
	if err != nil {
		return nil, errorf(ErrUnknown, "Creating the offer: %v", err)
	}
	sub.mu.Lock()
	for _, ss := range sub.streams {
		ss.mid = ss.tr.Mid()
	}
	sub.noteDataMid(desc.SDP)
	sub.mu.Unlock()
	return &plugin.JSEP{Type: "offer", SDP: desc.SDP}, nil
}

// renegotiate sends an updated offer, or, while the previous offer is unanswered, says "updating"
// and sends it once the answer arrives (as Janus does).
func (sub *subscriber) renegotiate(ctx context.Context, tx string) *requestError {
	sub.mu.Lock()
	p := sub.peer
	pending := p != nil && p.PC.SignalingState() == webrtc.SignalingStateHaveLocalOffer
	if pending {
		sub.queued = true
	}
	sub.mu.Unlock()
	if pending {
		sub.s.push(tx, map[string]any{short: "updating", "room": sub.room.id}, nil)
		return nil
	}
	offer, err := sub.offer(ctx)
	if err != nil {
		return err
	}
	sub.s.push(tx, map[string]any{short: "updated", "room": sub.room.id, "streams": sub.describe()}, offer)
	return nil
}

// describe lists the subscription's streams as attached/updated events do.
func (sub *subscriber) describe() []map[string]any {
	sub.mu.Lock()
	defer sub.mu.Unlock()
	out := []map[string]any{}
	var mindex int
	trs := sub.peer.PC.GetTransceivers()
	var lines map[string]offeredLine
	if local := sub.peer.PC.LocalDescription(); local != nil {
		lines = sdpLines(local.SDP)
	}
	for _, ss := range sub.streams {
		for i, t := range trs {
			if t == ss.tr {
				mindex = i
			}
		}
		if l, ok := lines[ss.mid]; ok {
			mindex = l.mindex // an application m-line before it shifts the transceiver's index
		}
		d := map[string]any{
			"type": ss.src.kind, "active": true, "mindex": mindex, "mid": ss.mid, "ready": ss.started && sub.up,
			"send": ss.send && !sub.paused, "feed_id": ss.feed.id, "feed_mid": ss.src.mid, "codec": ss.src.codecName,
		}
		if disp := ss.feed.identity()["display"]; disp != nil {
			d["feed_display"] = disp
		}
		if ss.crossref != "" {
			d["crossrefid"] = ss.crossref
		}
		if ss.src.simulcast {
			d["simulcast"] = map[string]any{"substream": ss.max.Spatial, "temporal": ss.max.Temporal}
		}
		if ss.src.svc {
			d["svc"] = map[string]any{"spatial_layer": ss.max.Spatial, "temporal_layer": ss.max.Temporal}
		}
		out = append(out, d)
	}
	if sub.data != nil && sub.data.mid != "" {
		d := sub.describeData(lines[sub.data.mid].mindex)
		sort.SliceStable(out, func(i, j int) bool { return out[i]["mindex"].(int) < out[j]["mindex"].(int) })
		i := sort.Search(len(out), func(i int) bool { return out[i]["mindex"].(int) > d["mindex"].(int) })
		out = append(out[:i], append([]map[string]any{d}, out[i:]...)...)
	}
	return out
}

func (sub *subscriber) stream(mid string) *subStream {
	sub.mu.Lock()
	defer sub.mu.Unlock()
	for _, ss := range sub.streams {
		if ss.mid == mid {
			return ss
		}
	}
	return nil
}

// layerChanged tells the subscriber which layer a stream now gets (Janus's substream/temporal or
// spatial_layer/temporal_layer events).
func (sub *subscriber) layerChanged(ss *subStream, l sfu.Layer) {
	if l.Spatial < 0 {
		return
	}
	sub.mu.Lock() // offer rewrites mids under the lock; this runs on the down-track's own goroutine
	mid := ss.mid
	sub.mu.Unlock()
	ev := map[string]any{short: "event", "room": sub.room.id, "mid": mid}
	if ss.src.svc {
		ev["spatial_layer"], ev["temporal_layer"] = l.Spatial, l.Temporal
	} else {
		ev["substream"], ev["temporal"] = l.Spatial, l.Temporal
	}
	sub.s.push("", ev, nil)
}

// slowLink tells the subscriber that its path does not carry what it asked for: the allocator had
// to take a stream below the requested layer because of the estimate (Janus sends the same event
// when a subscriber's NACKs pile up). current-bitrate is the path's estimate, in bit/s.
func (sub *subscriber) slowLink(estimate cc.Bitrate) {
	sub.s.push("", map[string]any{short: "slow_link", "room": sub.room.id, "current-bitrate": int64(estimate)}, nil)
}

func (sub *subscriber) mediaUp() {
	sub.mu.Lock()
	sub.up = true
	sub.mu.Unlock()
}

// mediaClosed stops forwarding when the PeerConnection goes away.
func (sub *subscriber) mediaClosed() {
	sub.mu.Lock()
	streams := sub.streams
	alloc := sub.alloc
	sub.streams, sub.up, sub.alloc = nil, false, nil
	sub.mu.Unlock()
	for _, ss := range streams {
		ss.down.Stop()
	}
	if alloc != nil {
		alloc.Close()
	}
	sub.closeData()
}

// close ends the subscription.
func (sub *subscriber) close() {
	sub.mu.Lock()
	already := sub.closed
	sub.closed = true
	counted := sub.counted
	sub.counted = false
	sub.mu.Unlock()
	if !already {
		sub.mediaClosed()
	}
	if counted {
		sub.room.removeSubscription()
	}
}

func (sub *subscriber) query() map[string]any {
	q := map[string]any{"type": "subscriber", "room": sub.room.id, "private_id": sub.pvtID}
	sub.mu.Lock()
	streams := append([]*subStream(nil), sub.streams...)
	alloc, p := sub.alloc, sub.peer
	sub.mu.Unlock()
	if alloc != nil {
		q["layer_policy"] = alloc.Policy()
	}
	if p != nil {
		if e := p.Estimator(); e != nil {
			q["estimate_bps"] = int64(e.Path().Estimate)
		}
	}
	var out []map[string]any
	for _, ss := range streams {
		st := ss.down.Stats()
		out = append(out, map[string]any{
			"mid": ss.mid, "feed_id": ss.feed.id, "feed_mid": ss.src.mid, "type": ss.src.kind,
			"current": st.Current.String(), "target": st.Target.String(), "max": ss.max.String(),
			"packets": st.Packets, "bytes": st.Bytes, "switches": st.Switches, "dropped": st.Dropped,
			"nacked": st.NACKed, "retransmitted": st.Retransmitted, "padding_bytes": st.PaddingBytes,
			"keyframe_requests": st.KeyframeRequests, "fraction_lost": st.FractionLost,
		})
	}
	q["streams"] = append(out, sub.dataQuery()...)
	return q
}

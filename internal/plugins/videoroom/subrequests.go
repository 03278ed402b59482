package videoroom

import (
	"context"
	"strings"

	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/internal/media"
	"github.com/strata-rtc/strata/internal/peer"
	"github.com/strata-rtc/strata/internal/plugin"
	"github.com/strata-rtc/strata/internal/sfu"
)

func (s *session) subscriberRequest(ctx context.Context, tx, name string, sub *subscriber, b body, jsep *plugin.JSEP) *requestError {
	switch name {
	case "start":
		return sub.start(tx, jsep)
	case "pause":
		sub.setPaused(true)
		s.push(tx, map[string]any{short: "event", "room": sub.room.id, "paused": "ok"}, nil)
	case "configure":
		if jsep != nil && jsep.SDP != "" {
			return sub.reanswer(ctx, tx, jsep)
		}
		return sub.configure(ctx, tx, b)
	case "subscribe", "unsubscribe", "update":
		if sub.answersOffers() {
			return errorf(ErrInvalidRequest, "A subscription that answered the client's offer is not renegotiated by the server")
		}
		return sub.update(ctx, tx, name, b)
	case "switch":
		return sub.switchSources(ctx, tx, b)
	case "leave":
		s.push(tx, map[string]any{short: "event", "room": sub.room.id, "left": "ok"}, nil)
		sub.close()
		s.h.ClosePeer("leave")
		s.setSubscriber(nil)
	default:
		return errorf(ErrInvalidRequest, "Unknown request '%s' for a subscriber", name)
	}
	return nil
}

// start takes the subscriber's answer (then forwarding begins), or resumes after a pause.
func (sub *subscriber) start(tx string, jsep *plugin.JSEP) *requestError {
	if jsep != nil && jsep.SDP != "" {
		if jsep.Type != "answer" {
			return errorf(ErrInvalidSDPType, "Unsupported SDP type '%s' (subscribers answer)", jsep.Type)
		}
		sub.mu.Lock()
		p := sub.peer
		sub.mu.Unlock()
		if err := p.SetAnswer(webrtc.SessionDescription{Type: webrtc.SDPTypeAnswer, SDP: jsep.SDP}); err != nil {
			return errorf(ErrInvalidSDP, "Error applying the answer: %v", err)
		}
		sub.mu.Lock()
		for _, ss := range sub.streams {
			if !ss.started {
				ss.started = true
				ss.down.Start()
			}
		}
		queued := sub.queued
		sub.queued = false
		sub.mu.Unlock()
		if queued {
			defer func() {
				ctx, cancel := context.WithTimeout(sub.s.ctx, negotiateTimeout)
				defer cancel()
				if err := sub.renegotiate(ctx, ""); err != nil {
					sub.s.push("", err.data(), nil)
				}
			}()
		}
	}
	sub.setPaused(false)
	sub.s.push(tx, map[string]any{short: "event", "room": sub.room.id, "started": "ok"}, nil)
	return nil
}

func (sub *subscriber) setPaused(paused bool) {
	sub.mu.Lock()
	sub.paused = paused
	streams := append([]*subStream(nil), sub.streams...)
	alloc := sub.alloc
	sub.mu.Unlock()
	for _, ss := range streams {
		sub.applySend(ss, alloc, paused)
	}
	sub.applyDataSend()
}

func (sub *subscriber) applySend(ss *subStream, alloc *sfu.Allocator, paused bool) {
	off := paused || !ss.send
	ss.down.SetPaused(off)
	if alloc != nil && ss.src.kind == "video" {
		alloc.SetPaused(ss.down, off)
	}
}

// configure changes what individual streams send and their layer caps, or restarts ICE.
func (sub *subscriber) configure(ctx context.Context, tx string, b body) *requestError {
	entries, _, err := b.list("streams", false)
	if err != nil {
		return err
	}
	if !b.has("streams") && (b.has("substream") || b.has("temporal") || b.has("spatial_layer") || b.has("temporal_layer") || b.has("mid")) {
		entries = []body{b} // the pre-multistream form addresses the first video stream
	}
	restart, _, err := b.boolean("restart")
	if err != nil {
		return err
	}
	sub.mu.Lock()
	alloc, paused := sub.alloc, sub.paused
	sub.mu.Unlock()
	for _, e := range entries {
		if mid, _, _ := e.str("mid", false); mid != "" && mid == sub.dataMid() {
			send, ok, err := e.boolean("send")
			if err != nil {
				return err
			}
			if ok {
				sub.setDataSend(mid, send)
			}
			continue
		}
		ss, err := sub.entryStream(e)
		if err != nil {
			return err
		}
		if send, ok, err := e.boolean("send"); err != nil {
			return err
		} else if ok {
			ss.send = send
			sub.applySend(ss, alloc, paused)
		}
		max, err := layerCaps(e, ss.max)
		if err != nil {
			return err
		}
		if max != ss.max && ss.src.kind == "video" {
			ss.max = max
			if alloc != nil {
				alloc.SetOptions(ss.down, sfu.TrackOptions{Max: max, Screen: ss.src.isScreen()})
			}
		}
	}
	ev := map[string]any{short: "event", "room": sub.room.id, "configured": "ok"}
	if !restart {
		sub.s.push(tx, ev, nil)
		return nil
	}
	offer, err := sub.offer(ctx, peer.BeforeLocal(func(pc *webrtc.PeerConnection) error {
		// Restart ICE: this offer's credentials are new; Peer.Offer then creates the real one.
		_, err := pc.CreateOffer(&webrtc.OfferOptions{ICERestart: true})
		return err
	}))
	if err != nil {
		return err
	}
	sub.s.push(tx, ev, offer)
	return nil
}

// entryStream finds the stream a configure entry addresses (by mid; without one, the first video).
func (sub *subscriber) entryStream(e body) (*subStream, *requestError) {
	mid, ok, err := e.str("mid", false)
	if err != nil {
		return nil, err
	}
	if ok {
		if ss := sub.stream(mid); ss != nil {
			return ss, nil
		}
		return nil, errorf(ErrInvalidElement, "No such mid '%s' in the subscription", mid)
	}
	sub.mu.Lock()
	defer sub.mu.Unlock()
	for _, ss := range sub.streams {
		if ss.src.kind == "video" {
			return ss, nil
		}
	}
	return nil, errorf(ErrMissingElement, "Missing mandatory element (mid)")
}

// update adds and removes streams and renegotiates (subscribe, unsubscribe, update).
func (sub *subscriber) update(ctx context.Context, tx, name string, b body) *requestError {
	var add, remove []body
	var err *requestError
	switch name {
	case "subscribe":
		add, _, err = b.list("streams", true)
	case "unsubscribe":
		remove, _, err = b.list("streams", true)
	default:
		var hasAdd, hasRemove bool
		if add, hasAdd, err = b.list("subscribe", false); err == nil {
			remove, hasRemove, err = b.list("unsubscribe", false)
		}
		if err == nil && !hasAdd && !hasRemove {
			err = errorf(ErrMissingElement, "Missing mandatory element (subscribe or unsubscribe)")
		}
	}
	if err != nil {
		return err
	}
	ws, err := sub.resolve(add)
	if err != nil {
		return err
	}
	if err := sub.s.p.importFeeds(ctx, ws); err != nil {
		return err
	}
	removed := sub.removeMatching(remove)
	for _, w := range ws {
		if err := sub.addStream(w); err != nil {
			return err
		}
	}
	if len(ws) == 0 && removed == 0 {
		sub.s.push(tx, map[string]any{short: "updated", "room": sub.room.id}, nil)
		return nil
	}
	return sub.renegotiate(ctx, tx)
}

// removeMatching drops the streams unsubscribe entries name (feed, feed+mid, or sub_mid).
func (sub *subscriber) removeMatching(entries []body) int {
	n := 0
	for _, e := range entries {
		feed, hasFeed, _ := e.uint("feed", false)
		mid, hasMid, _ := e.str("mid", false)
		subMid, hasSubMid, _ := e.str("sub_mid", false)
		n += sub.removeWhere(func(ss *subStream) bool {
			switch {
			case hasSubMid:
				return ss.mid == subMid
			case hasFeed && hasMid:
				return ss.feed.id == feed && ss.src.mid == mid
			case hasFeed:
				return ss.feed.id == feed
			}
			return false
		})
		dataMid := sub.dataMid()
		n += sub.removeDataWhere(func(l *dataLink) bool {
			switch {
			case hasSubMid:
				return dataMid != "" && subMid == dataMid
			case hasFeed && hasMid:
				return l.feed.id == feed && l.src.mid == mid
			case hasFeed:
				return l.feed.id == feed
			}
			return false
		})
	}
	return n
}

// removeWhere stops and removes matching streams; their m-lines become inactive.
func (sub *subscriber) removeWhere(match func(*subStream) bool) int {
	sub.mu.Lock()
	var keep, gone []*subStream
	for _, ss := range sub.streams {
		if match(ss) {
			gone = append(gone, ss)
		} else {
			keep = append(keep, ss)
		}
	}
	sub.streams = keep
	p, alloc := sub.peer, sub.alloc
	sub.mu.Unlock()
	for _, ss := range gone {
		ss.down.Stop()
		if alloc != nil {
			alloc.RemoveTrack(ss.down)
		}
		if p != nil {
			_ = p.PC.RemoveTrack(ss.tr.Sender())
		}
	}
	return len(gone)
}

// feedGone drops a departed publisher's streams and, with autoupdate, renegotiates.
func (sub *subscriber) feedGone(pub *publisher) {
	// The feed's data channel closed with its stream; the data m-line stays, nothing to negotiate.
	sub.removeDataWhere(func(l *dataLink) bool { return l.feed == pub })
	if sub.removeWhere(func(ss *subStream) bool { return ss.feed == pub }) == 0 || !sub.autoupdate {
		return
	}
	sub.mu.Lock()
	up := sub.peer != nil && !sub.closed
	sub.mu.Unlock()
	if !up {
		return
	}
	ctx, cancel := context.WithTimeout(sub.s.ctx, negotiateTimeout)
	defer cancel()
	if err := sub.renegotiate(ctx, ""); err != nil {
		sub.s.log.Debug("renegotiating after a feed left", "err", err)
	}
}

// switchSources re-points m-lines to other publishers' streams without renegotiation.
func (sub *subscriber) switchSources(ctx context.Context, tx string, b body) *requestError {
	entries, _, err := b.list("streams", true)
	if err != nil {
		return err
	}
	changes := 0
	for _, e := range entries {
		subMid, _, err := e.str("sub_mid", true)
		if err != nil {
			return err
		}
		ws, err := sub.resolve([]body{e})
		if err != nil {
			return err
		}
		if err := sub.s.p.importFeeds(ctx, ws); err != nil {
			return err
		}
		ss := sub.stream(subMid)
		if ss == nil || len(ws) != 1 || ws[0].st == nil || ws[0].st.codecName != ss.src.codecName || ws[0].st.kind != ss.src.kind {
			continue
		}
		if err := ss.down.SetReceiver(ws[0].st.recv); err != nil {
			continue
		}
		sub.mu.Lock()
		ss.feed, ss.src = ws[0].feed, ws[0].st
		sub.mu.Unlock()
		changes++
	}
	sub.s.push(tx, map[string]any{short: "event", "room": sub.room.id, "switched": "ok", "changes": changes, "streams": sub.describe()}, nil)
	return nil
}

// capability is what subscribers are offered for a published stream: its codec and fmtp.
func capability(st *pubStream) webrtc.RTPCodecCapability {
	return media.Capability(media.CodecByName(st.codecName), st.fmtp)
}

// restrictCodecs offers only the stream's codec (and its RTX) on a subscriber m-line, with the
// payload types and feedback strata's media engine registered.
func restrictCodecs(tr *webrtc.RTPTransceiver, want webrtc.RTPCodecCapability) error {
	engine := tr.Sender().GetParameters().Codecs
	chosen, ok := media.MatchCodec(want, engine)
	if !ok {
		return nil // not registered: leave Pion's default list
	}
	return tr.SetCodecPreferences(media.WithRTX(chosen, engine))
}

// isScreen guesses a screen share from the publisher's description of the stream (Janus has no
// flag for it; janus.js demos describe screen shares as such).
func (st *pubStream) isScreen() bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	d := strings.ToLower(st.description)
	return strings.Contains(d, "screen")
}

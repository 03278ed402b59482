package videoroom

import (
	"context"

	"github.com/strata-rtc/strata/internal/cluster/relay"
)

// Media of rooms that span nodes: a feed published here is exported to the relay while it is
// active; a feed of another node is imported once for this node, when a subscriber here first
// wants it, into Receivers that this node's DownTracks and allocators use as any other.

// export offers an active publisher's streams to the other nodes.
func (c *clusterNode) export(pub *publisher) {
	if c.relay == nil {
		return
	}
	var streams []relay.Stream
	for _, st := range pub.streamList() {
		layers, rids := 1, []string(nil)
		switch {
		case len(st.rids) > 0:
			layers, rids = len(st.rids), make([]string, len(st.rids))
			for rid, l := range st.rids {
				if l >= 0 && l < len(rids) {
					rids[l] = rid
				}
			}
		case len(st.layers) > 1:
			layers = len(st.layers)
		}
		streams = append(streams, relay.Stream{Mid: st.mid, Codec: capability(st), PayloadType: st.pt,
			Simulcast: st.simulcast, Layers: layers, RIDs: rids, Receiver: st.recv})
	}
	if d := pub.dataStream(); d != nil {
		streams = append(streams, relay.Stream{Mid: d.mid, Data: d.recv})
	}
	if err := c.relay.Export(feedName(pub.room.id, pub.id), streams); err != nil {
		c.log.Warn("exporting a feed to the relay", "room", pub.room.id, "id", pub.id, "err", err)
	}
}

// unexport withdraws a feed that stopped.
func (c *clusterNode) unexport(pub *publisher) {
	if c.relay != nil {
		c.relay.Unexport(feedName(pub.room.id, pub.id))
	}
}

// importFeeds makes sure every stream a subscriber wants has a Receiver here (a data stream, a
// DataReceiver: there is none when the link is plain RTP, or the publisher added its data channel
// after it was exported).
func (c *clusterNode) importFeeds(ctx context.Context, ws []wanted) *requestError {
	for _, w := range ws {
		if w.feed.node == "" {
			continue
		}
		if err := c.importFeed(ctx, w.feed); err != nil {
			return err
		}
		if w.data != nil && !w.feed.remote.dataImported(w.data) {
			return errorf(ErrNoSuchFeed, "The data of feed %d is on node %s and its relay does not carry it", w.feed.id, w.feed.node)
		}
	}
	return nil
}

// importFeed imports another node's feed, once.
func (c *clusterNode) importFeed(ctx context.Context, pub *publisher) *requestError {
	rf := pub.remote
	rf.mu.Lock()
	defer rf.mu.Unlock()
	if rf.imported != nil {
		attachData(pub, rf.imported) // announced since the import
		return nil
	}
	if c.relay == nil {
		return errorf(ErrNoSuchFeed, "Feed %d is on node %s and no relay carries it here", pub.id, pub.node)
	}
	imp, err := c.relay.Import(ctx, pub.node, feedName(pub.room.id, pub.id))
	if err != nil {
		return errorf(ErrNoSuchFeed, "Feed %d could not be relayed from node %s: %v", pub.id, pub.node, err)
	}
	recvs := imp.Receivers()
	streams := pub.streamList()
	for _, st := range streams {
		if recvs[st.mid] == nil {
			imp.Release()
			return errorf(ErrNoSuchFeed, "Feed %d: node %s relays no stream %s", pub.id, pub.node, st.mid)
		}
	}
	for _, st := range streams {
		st.recv = recvs[st.mid]
	}
	attachData(pub, imp)
	rf.imported = imp
	imp.OnGone(func() { c.feedEnded(pub) })
	return nil
}

// feedEnded stops relaying another node's feed here: its subscribers here lose its streams. A
// later import (the feed published again) gets new streams.
func (c *clusterNode) feedEnded(pub *publisher) {
	rf := pub.remote
	rf.mu.Lock()
	imp := rf.imported
	rf.imported = nil
	if imp != nil {
		pub.mu.Lock()
		fresh := make([]*pubStream, 0, len(pub.streams))
		for _, st := range pub.streams {
			st.mu.Lock()
			fresh = append(fresh, &pubStream{mid: st.mid, mindex: st.mindex, kind: st.kind, codecName: st.codecName, fmtp: st.fmtp,
				simulcast: st.simulcast, svc: st.svc, description: st.description, moderated: st.moderated, talking: st.talking})
			st.mu.Unlock()
		}
		pub.streams = fresh
		if pub.data != nil {
			pub.data = &pubData{mid: pub.data.mid, mindex: pub.data.mindex}
		}
		pub.mu.Unlock()
	}
	rf.mu.Unlock()
	c.p.dropFeed(pub)
	if imp != nil {
		imp.Release()
	}
}

// attachData gives another node's publisher's data stream the import's receiver (none when the
// link is plain RTP); rf.mu is held.
func attachData(pub *publisher, imp *relay.Import) {
	if d := pub.dataStream(); d != nil && d.recv == nil {
		d.recv = imp.DataReceivers()[d.mid]
	}
}

// dataImported reports whether d, another node's publisher's data stream, has its receiver here.
func (rf *remoteFeed) dataImported(d *pubData) bool {
	rf.mu.Lock()
	defer rf.mu.Unlock()
	return d.recv != nil
}

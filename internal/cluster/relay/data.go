package relay

import (
	"fmt"
	"sync"

	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/internal/sfu"
)

// Data streams (a videoroom publisher's data channels) cross a link on SCTP data channels of the
// link's PeerConnection, whose offer carries an application m-line for that (the "relay" channel
// created before it). Each imported data stream gets its own channel, negotiated out of band: the
// edge picks the SCTP stream id (as it picks SSRCs, from its half of the ids: allocDataChannel),
// opens the channel, and names the id in its subscribe request; the origin opens the same id and
// sends each message of the feed's sfu.DataReceiver on it through an sfu.DataSink, whose bounded
// queue drops (and counts) what a slow or dead link cannot take, so that the link never stalls the
// publisher or its local subscribers. The edge writes what arrives into a DataReceiver of its own,
// which its subscribers' sinks use as a local publisher's. The channels are ordered and reliable;
// the binary/text flag crosses as SCTP's payload protocol identifier.
//
// Plain RTP links (plain.go) have no SCTP: an edge on one imports a feed's media and leaves its
// data streams out (Import.DataReceivers has none of them).

// dataKind is a data stream's StreamDescriptor.Kind.
const dataKind = "data"

// firstDataChannel is the lowest SCTP stream id an edge picks: the ids below are left to the
// link's own channel (the "relay" channel the offer carries, which Pion numbers 0 or 1).
const firstDataChannel = 16

// dataOut is one data stream of an export sent on one link.
type dataOut struct {
	recv *sfu.DataReceiver
	sink *sfu.DataSink
}

// dataIn is one data stream of an imported feed.
type dataIn struct {
	desc StreamDescriptor
	id   uint16
	dc   *webrtc.DataChannel
	recv *sfu.DataReceiver
}

// DataReceivers are the feed's data streams on this node, by mid (none on a plain RTP link).
func (i *Import) DataReceivers() map[string]*sfu.DataReceiver {
	m := make(map[string]*sfu.DataReceiver, len(i.shared.data))
	for _, d := range i.shared.data {
		m[d.desc.Mid] = d.recv
	}
	return m
}

// CarriesData implements Feeds: every link but a plain RTP one carries data streams.
func (r *Relay) CarriesData() bool { return r.plain == nil }

// allocDataChannel returns an SCTP stream id for a data stream this node receives from peer: the
// node with the smaller id of a pair takes even ids, the other odd ones (ownsDataChannel). The ids
// go round (there are 32 759 per direction), skipping those still in use with peer.
func (r *Relay) allocDataChannel(peer string) (uint16, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	odd := uint32(0)
	if r.cfg.NodeID > peer {
		odd = 1
	}
	inUse := r.dataChannels[peer]
	for range 0x8000 {
		r.nextDataChannel += 2
		if r.nextDataChannel < firstDataChannel || r.nextDataChannel+odd > 0xfffe {
			r.nextDataChannel = firstDataChannel
		}
		id := uint16(r.nextDataChannel + odd)
		if inUse[id] {
			continue
		}
		if inUse == nil {
			inUse = map[uint16]bool{}
			r.dataChannels[peer] = inUse
		}
		inUse[id] = true
		return id, nil
	}
	return 0, fmt.Errorf("relay: every data channel id with %s is in use", peer)
}

// freeDataChannel gives back an id allocDataChannel returned.
func (r *Relay) freeDataChannel(peer string, id uint16) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.dataChannels[peer], id)
	if len(r.dataChannels[peer]) == 0 {
		delete(r.dataChannels, peer)
	}
}

// ownsDataChannel reports whether id is in the part of the SCTP stream ids from picks on a link
// with to (65535 is reserved by the data channel protocol).
func ownsDataChannel(from, to string, id uint16) bool {
	return id >= firstDataChannel && id != 0xffff && (id%2 == 1) == (from > to)
}

// negotiated is the init of a data channel both ends open themselves, on stream id.
func negotiated(id uint16) *webrtc.DataChannelInit {
	yes := true
	return &webrtc.DataChannelInit{Negotiated: &yes, ID: &id}
}

// dataChannelLabel names a feed's data channel on a link (for Pion's logs and stats only).
func dataChannelLabel(feed, mid string) string { return "relay/" + feed + "/" + mid }

// openDataIn opens the edge's channel of a data stream; its messages go to a new DataReceiver.
func (si *sharedImport) openDataIn(l *link, sd StreamDescriptor) (*dataIn, error) {
	id, err := si.relay.allocDataChannel(si.key.origin)
	if err != nil {
		return nil, err
	}
	d := &dataIn{desc: sd, id: id, recv: sfu.NewDataReceiver(false)}
	dc, err := l.pc.CreateDataChannel(dataChannelLabel(si.key.feed, sd.Mid), negotiated(d.id))
	if err != nil {
		d.close(si)
		return nil, fmt.Errorf("relay: receiving the data of %q: %w", si.key.feed, err)
	}
	d.dc = dc
	c := &si.relay.c
	dc.OnMessage(func(m webrtc.DataChannelMessage) {
		c.dataReceived.Add(1)
		d.recv.Write(m.Data, !m.IsString)
	})
	return d, nil
}

// close ends an imported data stream: the channel closes, and so does every sink of the receiver;
// its id is free again.
func (d *dataIn) close(si *sharedImport) {
	if d.dc != nil {
		_ = d.dc.Close()
	}
	d.recv.Close()
	si.relay.freeDataChannel(si.key.origin, d.id)
}

// checkDataChannels refuses channel ids that do not name the export's data streams, are not the
// edge's to pick, or are in use on the link. Called with r.mu held.
func (r *Relay) checkDataChannels(l *link, e *export, ids map[string]uint16) error {
	if len(ids) != 0 && l.pc == nil {
		return fmt.Errorf("%w: data channels asked on a plain RTP link", ErrBadDescriptor)
	}
	data := map[string]bool{}
	for _, s := range e.desc.Streams {
		data[s.Mid] = s.Kind == dataKind
	}
	used := map[uint16]bool{}
	for _, other := range r.exports {
		if fo := other.outs[l]; fo != nil {
			for _, id := range fo.dataIDs {
				used[id] = true
			}
		}
	}
	for mid, id := range ids {
		if !data[mid] {
			return fmt.Errorf("%w: feed %q has no data stream %q", ErrBadDescriptor, e.desc.Feed, mid)
		}
		if !ownsDataChannel(l.peer, r.cfg.NodeID, id) || used[id] {
			return fmt.Errorf("%w: data channel %d is not %s's to pick or is in use", ErrSSRCCollision, id, l.peer)
		}
		used[id] = true
	}
	return nil
}

// startDataOut opens the origin's channel of each data stream the edge asked for and attaches a
// sink to the stream's receiver. Called with r.mu held.
func (r *Relay) startDataOut(fo *feedOut, e *export, ids map[string]uint16) error {
	for _, s := range e.streams {
		id, ok := ids[s.Mid]
		if s.Data == nil || !ok {
			continue
		}
		dc, err := fo.link.pc.CreateDataChannel(dataChannelLabel(e.desc.Feed, s.Mid), negotiated(id))
		if err != nil {
			return fmt.Errorf("relay: sending the data of %s/%s to %s: %w", e.desc.Feed, s.Mid, fo.link.peer, err)
		}
		do := &dataOut{recv: s.Data, sink: sfu.NewPionDataSink(dc, r.cfg.Data)}
		r.dataTotals.started(do)
		fo.data = append(fo.data, do)
		fo.dataIDs = append(fo.dataIDs, id)
	}
	for _, do := range fo.data {
		if !do.recv.AddSink(do.sink) {
			do.sink.Close() // the stream ended meanwhile: the edge's channel closes with it
		}
	}
	return nil
}

// stopData detaches the sinks and closes their channels (the edge's close with them).
func (fo *feedOut) stopData() {
	for _, do := range fo.data {
		do.recv.RemoveSink(do.sink)
		do.sink.Close()
		fo.relay.dataTotals.stopped(do)
	}
}

// dataTotals counts the data messages the origin's sinks sent and dropped: the live sinks' own
// counts, and those of the stopped ones, moved over at once so that the totals never go down.
type dataTotals struct {
	mu                    sync.Mutex
	live                  map[*dataOut]struct{}
	sentGone, droppedGone uint64
}

func (t *dataTotals) started(do *dataOut) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.live == nil {
		t.live = map[*dataOut]struct{}{}
	}
	t.live[do] = struct{}{}
}

func (t *dataTotals) stopped(do *dataOut) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := t.live[do]; !ok {
		return
	}
	delete(t.live, do)
	st := do.sink.Stats()
	t.sentGone += st.Messages
	t.droppedGone += st.Dropped
}

// totals are the messages sent to other nodes and those dropped because a link could not take them.
func (t *dataTotals) totals() (sent, dropped uint64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for do := range t.live {
		st := do.sink.Stats()
		sent += st.Messages
		dropped += st.Dropped
	}
	return sent + t.sentGone, dropped + t.droppedGone
}

// dataStreamDescriptor describes an exported data stream.
func dataStreamDescriptor(s Stream) StreamDescriptor {
	return StreamDescriptor{Mid: s.Mid, Kind: dataKind}
}

// validateData checks a data stream's descriptor: a mid and nothing of a media stream's.
func (s StreamDescriptor) validateData() error {
	if s.Codec != (CodecDescriptor{}) || s.Simulcast || s.Layers != 0 || len(s.RIDs) != 0 || len(s.Extensions) != 0 {
		return fmt.Errorf("data stream %q with a codec, layers or extensions", s.Mid)
	}
	return nil
}

package videoroom

import (
	"strconv"

	"github.com/pion/sdp/v3"
	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/internal/sfu"
)

// Data channels, as Janus 1.x relays them: a publisher's offer with an application m-line
// publishes a "data" stream, whose messages (from any of the publisher's channels) go to every
// subscriber that asked for that stream's mid (or for the whole feed). A subscriber has one
// application m-line (one SCTP association) whatever the number of feeds it takes data from; each
// feed gets its own channel on it, labelled with the feed's id as Janus labels them, so that the
// application knows who sent what. The fan-out is the media core's (sfu.DataReceiver/DataSink): a
// subscriber that does not read loses messages itself and stalls no one.

// pubData is a publisher's data stream.
type pubData struct {
	mid    string
	mindex int
	recv   *sfu.DataReceiver
}

func (d *pubData) describe() map[string]any {
	return map[string]any{"type": "data", "mindex": d.mindex, "mid": d.mid}
}

// subData is a subscriber's application m-line and the feeds it relays.
type subData struct {
	mid   string
	send  bool // Janus's per-stream send (configure), besides the subscriber's pause
	links []*dataLink
}

// dataLink is one feed's channel on a subscriber's PeerConnection.
type dataLink struct {
	feed *publisher
	src  *pubData
	sink *sfu.DataSink
}

// dataStream is the publisher's data stream, nil without one.
func (pub *publisher) dataStream() *pubData {
	pub.mu.Lock()
	defer pub.mu.Unlock()
	return pub.data
}

// addDataStream publishes the offer's application m-line, once.
func (pub *publisher) addDataStream(lines map[string]offeredLine) {
	for mid, l := range lines {
		if l.media != "application" {
			continue
		}
		pub.mu.Lock()
		if pub.data == nil {
			pub.data = &pubData{mid: mid, mindex: l.mindex, recv: sfu.NewDataReceiver(false)}
		}
		pub.mu.Unlock()
		return
	}
}

// onDataChannel relays the messages of every channel the publisher opens (Janus ignores their
// labels: they all make the one data stream).
func (pub *publisher) onDataChannel(dc *webrtc.DataChannel) {
	dc.OnMessage(func(m webrtc.DataChannelMessage) {
		if d := pub.dataStream(); d != nil {
			d.recv.Write(m.Data, !m.IsString)
		}
	})
}

// stopData ends the data stream: every subscriber's channel of it closes.
func (pub *publisher) stopData() {
	pub.mu.Lock()
	d := pub.data
	pub.data = nil
	pub.mu.Unlock()
	if d != nil {
		d.recv.Close()
	}
}

// withData adds the data stream's description to streams, in m-line order.
func withData(streams []map[string]any, d *pubData) []map[string]any {
	if d == nil {
		return streams
	}
	e := d.describe()
	for i, s := range streams {
		if m, _ := s["mindex"].(int); m > d.mindex {
			return append(streams[:i], append([]map[string]any{e}, streams[i:]...)...)
		}
	}
	return append(streams, e)
}

// addData relays w's feed on the subscriber's application m-line (created with its first feed).
func (sub *subscriber) addData(w wanted) *requestError {
	sub.mu.Lock()
	p := sub.peer
	if sub.data == nil {
		sub.data = &subData{send: true}
	}
	for _, l := range sub.data.links {
		if l.feed == w.feed {
			sub.mu.Unlock()
			return nil
		}
	}
	sub.mu.Unlock()
	dc, err := p.PC.CreateDataChannel(strconv.FormatUint(w.feed.id, 10), nil)
	if err != nil {
		return errorf(ErrUnknown, "Data channel for feed %d: %v", w.feed.id, err)
	}
	p.TrackDataChannel(dc)
	link := &dataLink{feed: w.feed, src: w.data, sink: sfu.NewPionDataSink(dc, sub.s.p.cfg.DataChannels)}
	sub.mu.Lock()
	sub.data.links = append(sub.data.links, link)
	on := !sub.paused && sub.data.send
	sub.mu.Unlock()
	if on && !link.src.recv.AddSink(link.sink) {
		sub.removeDataWhere(func(l *dataLink) bool { return l == link }) // the feed stopped meanwhile
	}
	return nil
}

// applyDataSend attaches the links to their feeds, or detaches them while the subscriber is
// paused or the data stream's send is off (Janus relays nothing then).
func (sub *subscriber) applyDataSend() {
	sub.mu.Lock()
	if sub.data == nil {
		sub.mu.Unlock()
		return
	}
	on := !sub.paused && sub.data.send
	links := append([]*dataLink(nil), sub.data.links...)
	sub.mu.Unlock()
	for _, l := range links {
		if on {
			l.src.recv.AddSink(l.sink)
		} else {
			l.src.recv.RemoveSink(l.sink)
		}
	}
}

// setDataSend is configure's send for the data m-line (mid).
func (sub *subscriber) setDataSend(mid string, send bool) {
	sub.mu.Lock()
	ok := sub.data != nil && sub.data.mid == mid
	if ok {
		sub.data.send = send
	}
	sub.mu.Unlock()
	if ok {
		sub.applyDataSend()
	}
}

// removeDataWhere closes the matching links' channels; the m-line stays (as in Janus).
func (sub *subscriber) removeDataWhere(match func(*dataLink) bool) int {
	sub.mu.Lock()
	if sub.data == nil {
		sub.mu.Unlock()
		return 0
	}
	var keep, gone []*dataLink
	for _, l := range sub.data.links {
		if match(l) {
			gone = append(gone, l)
		} else {
			keep = append(keep, l)
		}
	}
	sub.data.links = keep
	sub.mu.Unlock()
	for _, l := range gone {
		l.src.recv.RemoveSink(l.sink)
		l.sink.Close()
	}
	return len(gone)
}

// dataMid is the subscriber's data m-line's mid ("" before the offer that adds it).
func (sub *subscriber) dataMid() string {
	sub.mu.Lock()
	defer sub.mu.Unlock()
	if sub.data == nil {
		return ""
	}
	return sub.data.mid
}

// noteDataMid records the mid the offer gave the application m-line; sub.mu is held.
func (sub *subscriber) noteDataMid(offer string) {
	if sub.data == nil || sub.data.mid != "" {
		return
	}
	for mid, l := range sdpLines(offer) {
		if l.media == "application" {
			sub.data.mid = mid
		}
	}
}

// sdpLines maps each mid of a description to its m-line (index and media type).
func sdpLines(s string) map[string]offeredLine {
	var parsed sdp.SessionDescription
	out := map[string]offeredLine{}
	if parsed.Unmarshal([]byte(s)) != nil {
		return out
	}
	for i, md := range parsed.MediaDescriptions {
		mid, _ := md.Attribute(sdp.AttrKeyMID)
		out[mid] = offeredLine{mindex: i, media: md.MediaName.Media}
	}
	return out
}

// describeData is the data m-line as attached/updated events list it (Janus: sources and their
// ids); sub.mu is held.
func (sub *subscriber) describeData(mindex int) map[string]any {
	d := sub.data
	e := map[string]any{"type": "data", "active": true, "mindex": mindex, "mid": d.mid, "ready": sub.up, "send": d.send && !sub.paused}
	if len(d.links) > 0 {
		ids := make([]uint64, 0, len(d.links))
		for _, l := range d.links {
			ids = append(ids, l.feed.id)
		}
		e["sources"], e["source_ids"] = len(ids), ids
	}
	return e
}

// closeData closes every link (the PeerConnection went away).
func (sub *subscriber) closeData() {
	sub.removeDataWhere(func(*dataLink) bool { return true })
	sub.mu.Lock()
	sub.data = nil
	sub.mu.Unlock()
}

// dataQuery is the subscriber's data links for handle_info.
func (sub *subscriber) dataQuery() []map[string]any {
	sub.mu.Lock()
	defer sub.mu.Unlock()
	if sub.data == nil {
		return nil
	}
	var out []map[string]any
	for _, l := range sub.data.links {
		st := l.sink.Stats()
		out = append(out, map[string]any{"mid": sub.data.mid, "feed_id": l.feed.id, "feed_mid": l.src.mid, "type": "data",
			"messages": st.Messages, "bytes": st.Bytes, "dropped": st.Dropped, "queued": st.Queued})
	}
	return out
}

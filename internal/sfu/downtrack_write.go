package sfu

import (
	"github.com/pion/rtp"
	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/internal/media"
)

// outPacket is what the locked part of the path decided about one packet; the write happens
// after the lock is released.
type outPacket struct {
	dst    destination
	m      media.Mapping
	marker bool
	pt     uint8
	dscp   uint8
}

// WriteRTP implements Sink: the per-packet path, for every packet of every layer of the receiver.
func (d *DownTrack) WriteRTP(p *Packet) {
	var o outPacket
	if !d.decide(p, &o) {
		return
	}
	payload := p.Payload()
	if o.m.RewritesPayload() {
		payload = p.out.buf[:copy(p.out.buf[:], payload)]
		o.m.WritePayload(&p.Flags, payload)
	}
	hdr := p.out.header(o.marker, o.pt, o.m.OutSeq, o.m.Timestamp(p.Header.Timestamp), o.dst.ssrc)
	copyExtensions(hdr, &o.dst, p.Bytes, &p.Header)
	d.mark(o.dst.ssrc, o.m.OutSeq, o.dscp)
	d.write(o.dst.writer, hdr, payload, len(p.Bytes))
}

// mark tells the Marker the DSCP of the packet about to be written (0 clears an older entry).
func (d *DownTrack) mark(ssrc uint32, seq uint16, dscp uint8) {
	if d.cfg.Marker != nil {
		d.cfg.Marker.Mark(ssrc, seq, dscp)
	}
}

// decide selects, rewrites and records one packet under the lock; false means it is not sent.
func (d *DownTrack) decide(p *Packet, o *outPacket) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.bound || d.paused || p.Source != d.recv {
		return false
	}
	pt, ok := d.payloadType(p.Header.PayloadType)
	if !ok {
		d.rw.Drop(&p.Header, &p.Flags, p.Payload(), false) // no gap in the subscriber's sequence
		return false
	}
	dec := d.sel.selectPacket(p.Layer, p.Flags, p.At)
	if dec.keyframeLayer >= 0 {
		d.recv.RequestKeyframe(dec.keyframeLayer, p.At)
	}
	if dec.changed {
		d.layerChanged()
	}
	if !dec.forward {
		if dec.drop != dropOther {
			d.dropped.Add(1)
			// A dropped picture gives up its picture id, so the subscriber sees no gap, unless the
			// codec's frames reference pictures by picture-id difference.
			wholePicture := dec.drop == dropPicture && !d.codec.KeepsDroppedPictureIDs()
			d.rw.Drop(&p.Header, &p.Flags, p.Payload(), wholePicture)
		}
		return false
	}
	if dec.switched || d.resume {
		d.rw.Switch()
		d.resume = false
	}
	if len(p.Bytes) > media.SlotSize {
		return false
	}
	m, ok := d.rw.Rewrite(&p.Header, &p.Flags, p.Payload(), p.At)
	if !ok {
		return false
	}
	var sid, tid int8
	if d.cfg.Marker != nil || d.enforced { // only marks and switch enforcement need the packet's layer
		sid, tid = d.sel.packetLayer(p.Layer, p.Flags)
		o.dscp = d.marks[sid][tid]
	}
	o.dst, o.m, o.marker, o.pt = d.dst, m, p.Header.Marker || dec.setMarker, pt
	d.lastMarker = o.marker
	if d.dst.nack {
		d.history.Put(historyEntry{valid: true, marker: o.marker, layer: int8(p.Layer),
			sid: sid, tid: tid, dscp: o.dscp, m: m, sentAt: p.At})
	}
	return true
}

// payloadType is the subscriber's payload type for a packet of the receiver's payload type in;
// false for an event the subscriber did not negotiate.
func (d *DownTrack) payloadType(in uint8) (uint8, bool) {
	if d.cfg.Events == nil || in != d.cfg.EventsPT {
		return d.dst.pt, true
	}
	return uint8(d.dst.eventPT), d.dst.eventPT >= 0
}

// write hands one packet to Pion and counts it as size bytes.
func (d *DownTrack) write(w webrtc.TrackLocalWriter, hdr *rtp.Header, payload []byte, size int) bool {
	if w == nil {
		return false
	}
	if _, err := w.WriteRTP(hdr, payload); err != nil {
		return false
	}
	d.packets.Add(1)
	d.bytes.Add(uint64(size))
	return true
}

// copyExtensions carries the extensions the subscriber negotiated too, under its ids.
func copyExtensions(hdr *rtp.Header, dst *destination, pkt []byte, h *media.Header) {
	for _, ids := range dst.extMap {
		if ids[0] == 0 || ids[1] == 0 {
			continue
		}
		v := h.Extension(pkt, ids[0])
		if v == nil {
			continue
		}
		if len(v) > 16 || ids[1] > 14 {
			_ = hdr.SetExtensionWithProfile(ids[1], v, rtp.ExtensionProfileTwoByte)
		} else {
			_ = hdr.SetExtension(ids[1], v)
		}
	}
}

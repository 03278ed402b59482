package sfu

import "github.com/strata-rtc/strata/internal/sfu/policy"

// The default marks (configs/strata.yaml, plugins.videoroom.netctl.marks): audio EF; layers AF41,
// AF42, AF43 — one class whose drop precedence rises with the layer, so that any DiffServ network
// drops the higher layers first.
const DefaultAudioDSCP = 46

// DefaultLayerDSCP returns the default layer marks, base first.
func DefaultLayerDSCP() []uint8 { return []uint8{34, 36, 38} }

// Marker records the DiffServ code point of each RTP packet a down-track is about to write, by the
// SSRC and sequence number it leaves with; the socket under Pion's SRTP finds it there
// (udpbatch.Marks). 0 means unmarked.
type Marker interface {
	Mark(ssrc uint32, seq uint16, dscp uint8)
}

// LayerMarks is the DSCP of each layer's packets: [spatial][temporal] as the packet's own layer
// ids (a simulcast encoding's index for spatial). 0 leaves a layer unmarked.
type LayerMarks [policy.MaxSpatial][policy.MaxTemporal]uint8

// UniformMarks marks every packet alike (audio).
func UniformMarks(dscp uint8) LayerMarks {
	var m LayerMarks
	for s := range m {
		for t := range m[s] {
			m[s][t] = dscp
		}
	}
	return m
}

// MarkLadder gives a stream's packets the marks of the rungs of its ladder, as registered with
// the network controller (base first): rung i's DSCP is dscp[i], and a packet carries the DSCP of
// the first rung that forwards it. A switch then enforces "k rungs" by passing the first k marks
// and dropping the others.
//
// ok is false — and the marks are empty — when a switch cannot enforce the ladder that way: more
// rungs than marks, or a scalable stream (VP9/AV1 SVC) whose rungs are not nested (a rung that
// adds a spatial layer at a lower temporal layer than the rung before it, as s1t0 after s0t2
// does, forwards fewer packets than its predecessor, which no set of passed marks can express).
// The stream is then left to the SFU. A simulcast stream's encodings are chosen by the SFU, so
// only the temporal rungs within one encoding need to nest, and they always do.
func MarkLadder(r *Receiver, ladder []Layer, dscp []uint8) (m LayerMarks, ok bool) {
	if len(ladder) == 0 || len(ladder) > len(dscp) {
		return m, false
	}
	svc := r.Codec().SVC() && !r.Config().Simulcast
	for i := 1; i < len(ladder) && svc; i++ {
		if ladder[i].Spatial < ladder[i-1].Spatial || ladder[i].Temporal < ladder[i-1].Temporal {
			return LayerMarks{}, false
		}
	}
	for s := range policy.MaxSpatial {
		for t := range policy.MaxTemporal {
			for i, l := range ladder {
				sameStream := int(l.Spatial) == s || (svc && int(l.Spatial) > s)
				if sameStream && int(l.Temporal) >= t {
					m[s][t] = dscp[i]
					break
				}
			}
		}
	}
	return m, true
}

// SetMarks sets the DSCP of the track's packets per layer. They are recorded on the Marker
// (DownTrackConfig.Marker) for every packet sent, retransmissions included.
func (d *DownTrack) SetMarks(m LayerMarks) {
	d.mu.Lock()
	d.marks = m
	d.mu.Unlock()
}

// SetEnforced says whether a switch on the path thins this track (the network controller's
// decision is enforced there, api.Decision.Enforced). While it does, the down-track forwards every
// layer of the stream it forwards, up to ceiling (the subscriber's own caps), marked, and leaves
// the dropping to the switch: all temporal layers of a simulcast encoding or of a single-encoding
// stream (VP8 temporal layers), all spatial and temporal layers of an SVC stream. The simulcast
// encoding is still the target's: separate encodings are chosen here, not at the switch. It sends
// no padding meanwhile (probing a path the controller has measured would only add traffic the
// switch passes), and does not retransmit packets of layers above the target (the switch drops
// them again). Off, the target is followed as before.
func (d *DownTrack) SetEnforced(on bool, ceiling Layer) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.enforced == on && d.ceiling == ceiling {
		return
	}
	d.enforced, d.ceiling = on, ceiling
	d.sel.forwardAll(on, ceiling)
}

// Enforced reports whether the down-track leaves the thinning to a switch (SetEnforced).
func (d *DownTrack) Enforced() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.enforced
}

// switchDrops says whether a switch enforcing the target drops a sent packet of layer (s, t).
// Called with mu held.
func (d *DownTrack) switchDrops(s, t int8) bool {
	if !d.enforced {
		return false
	}
	return !d.sel.within(s, t, d.sel.target())
}

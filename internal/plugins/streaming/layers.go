package streaming

import (
	"github.com/strata-rtc/strata/internal/media"
	"github.com/strata-rtc/strata/internal/sfu"
	"github.com/strata-rtc/strata/internal/sfu/policy"
)

// The layer events have Janus's shapes: a simulcast stream's substream and temporal layer, an SVC
// stream's spatial_layer and temporal_layer, each in an event of its own with the stream's mid when
// it changes ({"mid":"v","substream":1}); the first spatial report of an SVC stream carries its
// temporal layer too. A simulcast stream's temporal layer is reported only for VP8 with temporal
// layers (Janus has none for other codecs, and a VP8 stream without them never reaches the
// temporal layer Janus aims for). A configure asking for the layer already received is answered
// at once, without mid, as Janus does ({"substream":1}).

// layerNames are the names of the spatial and temporal layer of a stream's events.
func layerNames(vs *viewStream) (spatial, temporal string) {
	if vs.svc {
		return "spatial_layer", "temporal_layer"
	}
	return "substream", "temporal"
}

// layerChanged tells the viewer what changed in the layer a stream gets. It reads the down-track's
// current layer rather than the one it was called with, so that reports made on racing goroutines
// still end on the newest layer, each change told once.
func (v *viewer) layerChanged(vs *viewStream) {
	if !(vs.simulcast || vs.svc) || vs.down == nil {
		return
	}
	v.layerMu.Lock() // held while reading the layer too, so that an older reading is not told last
	defer v.layerMu.Unlock()
	cur := vs.down.Stats().Current
	if cur.Spatial < 0 {
		return
	}
	temporal := vs.svc || v.hasTemporal(vs, cur)
	sName, tName := layerNames(vs)
	if cur.Spatial != vs.reported.Spatial {
		res := map[string]any{"mid": vs.mid, sName: cur.Spatial}
		if vs.svc && vs.reported.Temporal < 0 {
			res[tName], vs.reported.Temporal = cur.Temporal, cur.Temporal
		}
		vs.reported.Spatial = cur.Spatial
		v.s.push("", map[string]any{Short: "event", "result": res}, nil)
	}
	if temporal && cur.Temporal != vs.reported.Temporal {
		vs.reported.Temporal = cur.Temporal
		v.s.push("", map[string]any{Short: "event", "result": map[string]any{"mid": vs.mid, tName: cur.Temporal}}, nil)
	}
}

// hasTemporal reports whether a simulcast stream is VP8 whose current layer carries temporal
// layers (packets above temporal layer 0 in the receiver's recent rates).
func (v *viewer) hasTemporal(vs *viewStream, cur policy.Layer) bool {
	recv := vs.down.Receiver()
	if recv.Codec() != media.CodecVP8 {
		return false
	}
	rates := recv.Rates(sfu.Now())
	s := int(cur.Spatial)
	return rates[s][policy.MaxTemporal-1] > rates[s][0]
}

// layerAlready answers a configure asking a stream for the layer it already gets, as Janus does:
// at once, without mid, before the configure's own result. Janus checks the temporal layer of a
// simulcast stream only for VP8.
func (v *viewer) layerAlready(vs *viewStream, r *Configure) {
	spatial, temporal := r.Substream, r.Temporal
	if vs.svc {
		spatial, temporal = r.SpatialLayer, r.TemporalLayer
	} else if vs.down.Receiver().Codec() != media.CodecVP8 {
		temporal = nil
	}
	sName, tName := layerNames(vs)
	v.layerMu.Lock()
	defer v.layerMu.Unlock()
	if spatial != nil && vs.reported.Spatial >= 0 && *spatial == int(vs.reported.Spatial) {
		v.s.push("", map[string]any{Short: "event", "result": map[string]any{sName: vs.reported.Spatial}}, nil)
	}
	if temporal != nil && vs.reported.Temporal >= 0 && *temporal == int(vs.reported.Temporal) {
		v.s.push("", map[string]any{Short: "event", "result": map[string]any{tName: vs.reported.Temporal}}, nil)
	}
}

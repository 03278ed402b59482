package videoroom

import (
	"github.com/strata-rtc/strata/internal/config"
	"github.com/strata-rtc/strata/internal/netctl/api"
	"github.com/strata-rtc/strata/internal/peer"
	"github.com/strata-rtc/strata/internal/sfu"
	"github.com/strata-rtc/strata/internal/sfu/policy"
)

// Switch enforcement (plugins.videoroom.netctl.enforcement: switch): each stream's rungs are
// registered with a DSCP mark each, and each subscription with its flow, so that a switch next to
// the SFU can drop the rungs the controller's decision leaves out. While it does (the decision
// says Enforced), the subscriber's down-track forwards every layer, marked (sfu.DownTrack.
// SetEnforced through the allocator); otherwise the SFU thins it as in sfu mode.

// initMarks reads the mode and the layer marks (the reference configuration's when unset).
func (b *netBridge) initMarks() {
	b.switchMode = b.cfg.Enforcement == config.EnforceSwitch
	b.layerDSCP = b.cfg.Marks.MarkBytes()
	if len(b.cfg.Marks.Layers) == 0 {
		b.layerDSCP = sfu.DefaultLayerDSCP()
	}
	if b.cfg.Marks.Audio == 0 && len(b.cfg.Marks.Layers) == 0 {
		b.cfg.Marks.Audio = sfu.DefaultAudioDSCP
	}
}

// markLayers gives a stream's rungs their DSCP (in place) and returns the marks of its packets'
// layers; nothing in sfu mode, or when the stream cannot be marked (more rungs than marks, an SVC
// ladder that does not nest: sfu.MarkLadder), which no switch can then enforce.
func (b *netBridge) markLayers(recv *sfu.Receiver, layers []api.Layer, ladder []policy.Layer) sfu.LayerMarks {
	if !b.switchMode {
		return sfu.LayerMarks{}
	}
	marks, ok := sfu.MarkLadder(recv, ladder, b.layerDSCP)
	if !ok {
		return sfu.LayerMarks{}
	}
	for i := range layers {
		layers[i].DSCP = int(b.layerDSCP[i])
	}
	return marks
}

// flowOf is the flow a subscriber's media leaves on (switch mode): the selected ICE pair, nil
// before one is selected or when it is not UDP.
func (b *netBridge) flowOf(p *peer.Peer) *api.Flow {
	if !b.switchMode || p == nil {
		return nil
	}
	local, remote, ok := p.SelectedFlow()
	if !ok {
		return nil
	}
	return &api.Flow{Proto: "udp", Src: local.String(), Dst: remote.String()}
}

func flowEqual(a, b *api.Flow) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

// markDownTrack prepares a new down-track on p for marks (switch mode, on the UDP mux's batching
// sockets): its packets are recorded in the sockets' mark table; an audio track is marked at once
// (video gets its stream's marks with the registration, feed).
func (b *netBridge) markDownTrack(cfg *sfu.DownTrackConfig, p *peer.Peer) {
	if b == nil || !b.switchMode || p.Marks() == nil {
		return
	}
	cfg.Marker = p.Marks()
}

// markAudio marks an audio down-track made with markDownTrack.
func (b *netBridge) markAudio(d *sfu.DownTrack, kind string, cfg *sfu.DownTrackConfig) {
	if b == nil || cfg.Marker == nil || kind != "audio" {
		return
	}
	d.SetMarks(sfu.UniformMarks(uint8(b.cfg.Marks.Audio)))
}

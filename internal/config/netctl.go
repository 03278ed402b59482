package config

import (
	"errors"
	"fmt"
)

// maxMarkedLayers bounds netctl.marks.layers (the controller takes at most 16 layers a stream).
const maxMarkedLayers = 16

// validate checks the enforcement mode and the marks: known mode, code points of 6 bits, and no
// mark used twice (a switch could not tell those packets apart).
func (n VideoRoomNetCtl) validate() []error {
	var errs []error
	if n.Enforcement != "" && n.Enforcement != EnforceSFU && n.Enforcement != EnforceSwitch { // "": sfu
		errs = append(errs, fmt.Errorf("plugins.videoroom.netctl.enforcement: %q is not %q or %q", n.Enforcement, EnforceSFU, EnforceSwitch))
	}
	if len(n.Marks.Layers) > maxMarkedLayers {
		errs = append(errs, fmt.Errorf("plugins.videoroom.netctl.marks.layers: %d marks, at most %d", len(n.Marks.Layers), maxMarkedLayers))
	}
	seen := map[int]string{}
	check := func(what string, d int, zeroOK bool) {
		switch {
		case d < 0 || d > 63 || (d == 0 && !zeroOK):
			errs = append(errs, fmt.Errorf("plugins.videoroom.netctl.marks.%s: %d is not a DiffServ code point (1 to 63)", what, d))
		case d == 0:
		case seen[d] != "":
			errs = append(errs, fmt.Errorf("plugins.videoroom.netctl.marks.%s: %d already marks %s", what, d, seen[d]))
		default:
			seen[d] = what
		}
	}
	check("audio", n.Marks.Audio, true)
	for i, d := range n.Marks.Layers {
		check(fmt.Sprintf("layers[%d]", i), d, false)
	}
	return errs
}

// validateMarksSocket: marks are set per packet by the ICE UDP mux's batching sockets, so switch
// enforcement needs them.
func (c *Config) validateMarksSocket() error {
	n := c.Plugins.VideoRoom.NetCtl
	if n.URL == "" || n.Enforcement != EnforceSwitch || (c.Media.ICE.UDPMuxPort > 0 && c.Media.ICE.BatchWrites) {
		return nil
	}
	return errors.New("plugins.videoroom.netctl.enforcement: switch needs media.ice.udp_mux_port and media.ice.batch_writes (the shared sockets mark each packet with its layer's DSCP)")
}

// MarkBytes returns the layer marks as the SFU takes them.
func (m NetCtlMarks) MarkBytes() []uint8 {
	out := make([]uint8, len(m.Layers))
	for i, d := range m.Layers {
		out[i] = uint8(d)
	}
	return out
}

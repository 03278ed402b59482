package videoroom

// Simulcast by SSRC, the way Chrome's SDP munging and janus.js signal it: one video m-line with
// a=ssrc-group:SIM <low> <mid> <high> (lowest quality first), each layer's RTX stream in an
// a=ssrc-group:FID <media> <rtx>, and no RID in the packets. The order in the SIM group gives the
// substream (0, 1, 2); SSRCs after the third are ignored, as Janus does. An m-line that also has
// a=rid lines uses RID simulcast and its SIM group is ignored (Janus likewise).
//
// Pion refuses an m-line with several media SSRCs as Plan B, so Pion is shown the offer without the
// upper layers (offerForPion): it receives the base layer (and its RTX) itself and fires OnTrack for
// it, with no RID. The upper layers and their RTX streams are received with peer.ReceiveSSRC; RTX
// packets are turned back into the packets they repair (media.UnwrapRTX) before the stream's receiver,
// whose duplicate filter drops retransmissions of packets already received.

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/pion/sdp/v3"

	"github.com/strata-rtc/strata/internal/sfu/policy"
)

// ssrcLayer is one layer of SSRC simulcast: its media SSRC and its RTX SSRC (0: none).
type ssrcLayer struct{ ssrc, rtx uint32 }

// ssrcSimulcast reads the SSRC simulcast of a video m-line: its layers (lowest first; nil when the
// m-line has no SIM group of at least two SSRCs, or uses RIDs) and hidden, the SSRCs Pion must not
// see (the upper layers, their RTX, ignored extra layers and their RTX). A malformed SIM group, or
// in an m-line with a SIM group an FID group that does not parse, is an error.
func ssrcSimulcast(md *sdp.MediaDescription) (layers []ssrcLayer, hidden []uint32, err error) {
	if md.MediaName.Media != "video" {
		return nil, nil, nil
	}
	var sim []string
	var fidErr error
	declared := map[uint32]bool{}
	fid := map[uint32]uint32{}  // media SSRC → RTX SSRC
	repair := map[uint32]bool{} // every RTX SSRC
	for _, a := range md.Attributes {
		switch a.Key {
		case "rid":
			return nil, nil, nil
		case sdp.AttrKeySSRC:
			if id, err := parseSSRC(strings.SplitN(a.Value, " ", 2)[0]); err == nil {
				declared[id] = true
			}
		case sdp.AttrKeySSRCGroup:
			f := strings.Fields(a.Value)
			if len(f) == 0 {
				continue
			}
			switch f[0] {
			case "SIM":
				if sim != nil {
					return nil, nil, fmt.Errorf("more than one a=ssrc-group:SIM")
				}
				if sim = f[1:]; len(sim) == 0 {
					return nil, nil, fmt.Errorf("empty a=ssrc-group:SIM")
				}
			case sdp.SemanticTokenFlowIdentification:
				if err := addFID(f, fid, repair); err != nil && fidErr == nil {
					fidErr = err
				}
			}
		}
	}
	if sim == nil {
		return nil, nil, nil // FID groups alone are Pion's business
	}
	if fidErr != nil {
		return nil, nil, fidErr
	}
	if err := checkSIM(sim, declared, repair); err != nil || len(sim) < 2 {
		return nil, nil, err
	}
	for i, s := range sim {
		id, _ := parseSSRC(s)
		l := ssrcLayer{ssrc: id, rtx: fid[id]}
		if i < policy.MaxSpatial {
			layers = append(layers, l)
		}
		if i > 0 {
			hidden = append(hidden, l.ssrc)
			if l.rtx != 0 {
				hidden = append(hidden, l.rtx)
			}
		}
	}
	return layers, hidden, nil
}

// checkSIM validates the SSRCs of a SIM group: numbers, none twice, each declared with a=ssrc,
// none an RTX stream.
func checkSIM(sim []string, declared, repair map[uint32]bool) error {
	seen := map[uint32]bool{}
	for _, s := range sim {
		id, err := parseSSRC(s)
		if err != nil {
			return fmt.Errorf("a=ssrc-group:SIM: %w", err)
		}
		switch {
		case seen[id]:
			return fmt.Errorf("a=ssrc-group:SIM lists SSRC %d twice", id)
		case !declared[id]:
			return fmt.Errorf("a=ssrc-group:SIM lists SSRC %d, which has no a=ssrc line", id)
		case repair[id]:
			return fmt.Errorf("a=ssrc-group:SIM lists SSRC %d, which is an RTX stream (a=ssrc-group:FID)", id)
		}
		seen[id] = true
	}
	return nil
}

// addFID records an a=ssrc-group:FID <media> <rtx> group.
func addFID(f []string, fid map[uint32]uint32, repair map[uint32]bool) error {
	if len(f) != 3 {
		return fmt.Errorf("a=ssrc-group:FID needs two SSRCs, has %d", len(f)-1)
	}
	primary, err := parseSSRC(f[1])
	if err != nil {
		return fmt.Errorf("a=ssrc-group:FID: %w", err)
	}
	rtx, err := parseSSRC(f[2])
	if err != nil {
		return fmt.Errorf("a=ssrc-group:FID: %w", err)
	}
	if primary == rtx || repair[rtx] || fid[primary] != 0 {
		return fmt.Errorf("a=ssrc-group:FID %d %d repeats an SSRC", primary, rtx)
	}
	fid[primary], repair[rtx] = rtx, true
	return nil
}

// checkLayersUnique refuses an offer in which an SSRC of a SIM group (or its RTX) is also declared
// in another m-line.
func checkLayersUnique(mds []*sdp.MediaDescription, lines map[string]offeredLine) error {
	for _, l := range lines {
		for i, md := range mds {
			if i == l.mindex || len(l.layers) == 0 {
				continue
			}
			for _, a := range md.Attributes {
				if a.Key != sdp.AttrKeySSRC {
					continue
				}
				id, err := parseSSRC(strings.SplitN(a.Value, " ", 2)[0])
				for _, layer := range l.layers {
					if err == nil && (id == layer.ssrc || id == layer.rtx) {
						return fmt.Errorf("SSRC %d of the SIM group of m-line %d is also in m-line %d", id, l.mindex, i)
					}
				}
			}
		}
	}
	return nil
}

// parseSSRC reads a decimal SSRC; 0 is refused (libwebrtc and Janus treat it as none).
func parseSSRC(s string) (uint32, error) {
	v, err := strconv.ParseUint(s, 10, 32)
	if err != nil || v == 0 {
		return 0, fmt.Errorf("invalid SSRC %q", s)
	}
	return uint32(v), nil
}

// ridExtensions are the RID header extensions, left out of Pion's offer when no m-line uses RIDs.
var ridExtensions = map[string]bool{sdp.SDESRTPStreamIDURI: true, sdp.SDESRepairRTPStreamIDURI: true}

// offerForPion returns the offer as Pion must see it: for each m-line with SSRC simulcast, no SIM
// group and no trace of the hidden SSRCs (a=ssrc lines, groups naming them). When no m-line uses
// RIDs the RID header extensions go too, so that they are not negotiated: Pion then gives up on a
// hidden SSRC's packets at once, instead of reading a few of them in search of a RID (they would
// be lost) and binding and unbinding the stream's interceptors by SSRC (which could remove the
// state of strata's own receiver of the stream). Other lines are kept byte for byte.
func offerForPion(offer string, lines map[string]offeredLine) string {
	hidden := map[int]map[uint32]bool{}
	rids := false
	for _, l := range lines {
		rids = rids || len(l.rids) > 0
		if len(l.hidden) == 0 {
			continue
		}
		set := map[uint32]bool{}
		for _, s := range l.hidden {
			set[s] = true
		}
		hidden[l.mindex] = set
	}
	if len(hidden) == 0 {
		return offer
	}
	var out strings.Builder
	section := -1
	for line := range strings.Lines(offer) {
		text := strings.TrimRight(line, "\r\n")
		if strings.HasPrefix(text, "m=") {
			section++
		}
		if !rids && isRIDExtmap(text) || hidesSSRC(text, hidden[section]) {
			continue
		}
		out.WriteString(line)
	}
	return out.String()
}

// hidesSSRC reports whether an attribute line of an m-line whose hidden SSRCs are set must go.
func hidesSSRC(text string, set map[uint32]bool) bool {
	if len(set) == 0 {
		return false
	}
	if v, ok := strings.CutPrefix(text, "a=ssrc:"); ok {
		id, err := parseSSRC(strings.SplitN(v, " ", 2)[0])
		return err == nil && set[id]
	}
	v, ok := strings.CutPrefix(text, "a=ssrc-group:")
	if !ok {
		return false
	}
	f := strings.Fields(v)
	if len(f) > 0 && f[0] == "SIM" {
		return true
	}
	for _, s := range f[min(1, len(f)):] {
		if id, err := parseSSRC(s); err == nil && set[id] {
			return true
		}
	}
	return false
}

func isRIDExtmap(text string) bool {
	v, ok := strings.CutPrefix(text, "a=extmap:")
	if !ok {
		return false
	}
	f := strings.Fields(v)
	return len(f) >= 2 && ridExtensions[f[1]]
}

package gateway

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"

	"github.com/strata-rtc/strata/internal/janus"
	"github.com/strata-rtc/strata/internal/pcap"
	"github.com/strata-rtc/strata/internal/record"
)

// startPcap is the admin API's start_pcap at a handle: the handle's clear RTP and RTCP, both
// directions, written to a pcap file (internal/pcap) from now until stop_pcap, the handle going or
// the server stopping, across PeerConnections of the handle. Parameters as Janus's: `folder` and
// `filename` (strings; both taken inside transports.admin.pcap_dir, one leaving it is refused),
// `truncate` (a non-negative integer: bytes kept of each packet, 0 all).
func (g *Gateway) startPcap(r adminReq) janus.Message {
	folder, jerr := optString(r, "folder")
	if jerr != nil {
		return r.fail(jerr)
	}
	filename, jerr := optString(r, "filename")
	if jerr != nil {
		return r.fail(jerr)
	}
	truncate := int64(0)
	if _, ok := r.Fields["truncate"]; ok {
		if truncate, jerr = intParam(r, "truncate", 0, 1<<31-1); jerr != nil {
			return r.fail(jerr)
		}
	}
	if filename == "" {
		filename = fmt.Sprintf("strata-pcap-%d.pcap", rand.Uint32()) // Janus: janus-text2pcap-<random>.pcap
	}
	h := r.h
	h.mu.Lock()
	running := h.capture != nil
	h.mu.Unlock()
	if running {
		return r.fail(janus.Errorf(janus.ErrUnknown, "pcap already started"))
	}
	path, err := record.Confine(g.cfg.Transports.Admin.PcapDir, folder, filename)
	if err == nil {
		err = os.MkdirAll(filepath.Dir(path), 0o755)
	}
	var c *pcap.Capture
	if err == nil {
		c, err = pcap.Create(path, int(truncate), 0)
	}
	if err != nil {
		h.log.Warn("start_pcap refused", "err", err)
		return r.fail(janus.Errorf(janus.ErrUnknown, "Error starting pcap dump: %v", err))
	}
	h.mu.Lock()
	if h.capture != nil || h.closing { // another start_pcap won, or the handle is going
		h.mu.Unlock()
		c.Close()
		os.Remove(path)
		return r.fail(janus.Errorf(janus.ErrUnknown, "pcap already started"))
	}
	h.capture = c
	var p = h.slot
	h.mu.Unlock()
	if p != nil && p.p != nil {
		p.p.SetCapture(c)
	}
	h.log.Info("pcap capture started", "path", path, "truncate", truncate)
	return r.ok()
}

func (g *Gateway) stopPcap(r adminReq) janus.Message {
	if !r.h.stopCapture() {
		return r.fail(janus.Errorf(janus.ErrUnknown, "Capture not started"))
	}
	return r.ok()
}

// stopCapture ends the handle's capture, if there is one, and reports whether there was.
func (h *handle) stopCapture() bool {
	h.mu.Lock()
	c := h.capture
	h.capture = nil
	slot := h.slot
	h.mu.Unlock()
	if c == nil {
		return false
	}
	if slot != nil && slot.p != nil {
		slot.p.SetCapture(nil)
	}
	err := c.Close()
	h.log.Info("pcap capture stopped", "path", c.Path(), "packets", c.Written(), "dropped", c.Dropped(), "err", err)
	return true
}

// optString reads an optional string parameter (467 if it is not a string).
func optString(r adminReq, name string) (string, *janus.Error) {
	raw, ok := r.Fields[name]
	if !ok {
		return "", nil
	}
	var s string
	if json.Unmarshal(raw, &s) != nil || string(raw) == "null" {
		return "", janus.WrongType(name, "a string")
	}
	return s, nil
}

package videocall

import (
	"time"

	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/internal/sfu"
	"github.com/strata-rtc/strata/internal/sfu/policy"
)

// onTrack feeds an incoming track (one per simulcast layer) into its m-line's Receiver.
func (l *leg) onTrack(remote *webrtc.TrackRemote, receiver *webrtc.RTPReceiver) {
	var t *track
	for _, tr := range l.peer.PC.GetTransceivers() {
		if tr.Receiver() == receiver {
			l.mu.Lock()
			t = l.tracks[tr.Mid()]
			l.mu.Unlock()
		}
	}
	if t == nil || t.recv == nil {
		go drain(remote)
		return
	}
	layer := 0
	if v, ok := t.layerOf[remote.RID()]; ok {
		layer = v
	}
	t.recv.SetLayerSSRC(layer, uint32(remote.SSRC()))
	go forward(remote, t.recv, layer)
}

// forward reads one incoming track into its Receiver, with one buffer for every packet.
func forward(remote *webrtc.TrackRemote, recv *sfu.Receiver, layer int) {
	buf := make([]byte, 1500)
	for {
		n, _, err := remote.Read(buf)
		if err != nil {
			return
		}
		recv.WriteRTP(layer, buf[:n], sfu.Now())
	}
}

func drain(remote *webrtc.TrackRemote) {
	buf := make([]byte, 1500)
	for {
		if _, _, err := remote.Read(buf); err != nil {
			return
		}
	}
}

// ready starts forwarding to s once its PeerConnection is up, with a keyframe from the other
// user, and starts the REMB cap of what s sends.
func (c *call) ready(s *session) {
	l := c.leg(s)
	l.mu.Lock()
	first := !l.up
	l.up = true
	l.mu.Unlock()
	if !first {
		return
	}
	for _, t := range l.list() {
		t.down.Start()
		if t.video {
			for layer := range policy.MaxSpatial {
				t.down.Receiver().RequestKeyframe(layer, sfu.Now())
			}
		}
	}
	c.applySettings(c.other(l).s)
	c.applySettings(s)
	go l.rembLoop()
}

// applySettings applies s's `set` state: s's audio and video on or off towards the peer (the
// peer's down-tracks paused), and the layer cap of what s receives.
func (c *call) applySettings(s *session) {
	l := c.leg(s)
	peer := c.other(l)
	peer.mu.Lock()
	up := peer.up
	peer.mu.Unlock()
	for _, t := range peer.list() {
		active := s.audioActive.Load()
		if t.video {
			active = s.videoActive.Load()
			peer.alloc.SetPaused(t.down, !active || !up)
		}
		t.down.SetPaused(!active || !up)
	}
	s.p.mu.Lock()
	want := s.want
	s.p.mu.Unlock()
	for _, t := range l.list() {
		if t.video {
			l.alloc.SetOptions(t.down, sfu.TrackOptions{Max: want})
		}
	}
	l.sendREMB()
}

// track is the leg's track of a mid, if any.
func (l *leg) track(mid string) *track {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.tracks[mid]
}

// list is the leg's tracks.
func (l *leg) list() []*track {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]*track, 0, len(l.tracks))
	for _, t := range l.tracks {
		out = append(out, t)
	}
	return out
}

// layerChanged tells this leg's user that the layer it receives changed, one event per changed
// dimension: Janus's "simulcast" event (substream, temporal) for a simulcast sender, and for an
// SVC sender (VP9, AV1), which Janus's videocall does not relay by layer, an "svc" event with the
// spatial_layer and temporal_layer names of Janus's videoroom.
func (l *leg) layerChanged(t, src *track, cur policy.Layer) {
	simulcast := src.simulcast.Load()
	if cur.Spatial < 0 || !(simulcast || t.codec.SVC()) {
		return
	}
	event, sName, tName := "simulcast", "substream", "temporal"
	if !simulcast {
		event, sName, tName = "svc", "spatial_layer", "temporal_layer"
	}
	l.mu.Lock()
	prev := t.reported
	t.reported = cur
	l.mu.Unlock()
	ev := func(key string, v int8) map[string]any {
		return map[string]any{"event": event, "videocodec": t.codec.String(), key: v}
	}
	if cur.Spatial != prev.Spatial {
		l.s.result("", ev(sName, cur.Spatial), nil)
	}
	if cur.Temporal != prev.Temporal {
		l.s.result("", ev(tName, cur.Temporal), nil)
	}
}

// rembLoop repeats the bitrate cap every second while one is set (Chrome, with transport-wide
// feedback, sends no REMB that Janus would answer).
func (l *leg) rembLoop() {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-l.c.done:
			return
		case <-l.peer.Closed():
			return
		case <-tick.C:
			if l.s.bitrate.Load() > 0 {
				l.sendREMB()
			}
		}
	}
}

// sendREMB caps what this leg's user sends on each video m-line; zero lifts the cap.
func (l *leg) sendREMB() {
	b := l.s.bitrate.Load()
	if b == 0 {
		b = noLimit
	}
	for _, t := range l.list() {
		if !t.video || t.recv == nil {
			continue
		}
		var ssrcs []uint32
		for layer := range policy.MaxSpatial {
			if ssrc := t.recv.LayerSSRC(layer); ssrc != 0 {
				ssrcs = append(ssrcs, ssrc)
			}
		}
		l.peer.CapBitrate(b, ssrcs...)
	}
}

// closed reports whether the leg's PeerConnection is closed.
func (l *leg) closed() bool {
	select {
	case <-l.peer.Closed():
		return true
	default:
		return false
	}
}

// close stops the call's media; the PeerConnections are closed by the hangup.
func (c *call) close() {
	c.once.Do(func() {
		close(c.done)
		for _, l := range c.legs {
			if l == nil {
				continue
			}
			l.alloc.Close()
			l.stopData()
			for _, t := range l.list() {
				t.down.Stop()
				if t.recv != nil {
					t.recv.Close()
				}
			}
		}
	})
}

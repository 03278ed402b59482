package sfu

import (
	"testing"
	"time"

	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/internal/media"
	"github.com/strata-rtc/strata/internal/media/mediatest"
)

func TestSVCSelectorDropsLayersAndMovesTheMarker(t *testing.T) {
	bind := &fakeBinding{record: true}
	var requests int
	recv := NewReceiver(ReceiverConfig{Codec: media.CodecVP9}, func(int, uint32) { requests++ })
	d := NewDownTrack(recv, DownTrackConfig{ID: "v", Codec: webrtc.RTPCodecCapability{MimeType: webrtc.MimeTypeVP8, ClockRate: 90000}})
	if _, err := d.Bind(bind); err != nil {
		t.Fatal(err)
	}
	d.Start()
	d.SetTarget(lay(1, 1))
	seq, ts, pic, tl0 := uint16(10), uint32(0), uint16(0), uint8(0)
	now := time.Duration(0)
	send := func(n int, keyAt int) {
		for i := 0; i < n; i++ {
			tid := []uint8{0, 2, 1, 2}[pic%4]
			key := int(pic) == keyAt
			if key {
				tid = 0
			}
			if tid == 0 && pic > 0 {
				tl0++
			}
			for _, p := range mediatest.VP9Picture(&seq, ts, pic, tl0, tid, key) {
				recv.WriteRTP(0, p, now)
			}
			ts += 3000
			pic++
			now += 33 * time.Millisecond
		}
	}
	send(20, 0)
	for _, p := range bind.sent() {
		f, _ := media.ParseVP9(p.payload)
		if f.SID > 1 || f.TID > 1 {
			t.Fatalf("forwarded s%d t%d above the target s1t1", f.SID, f.TID)
		}
		if p.hdr.Marker != (f.SID == 1) {
			t.Fatalf("marker %v on spatial layer %d", p.hdr.Marker, f.SID)
		}
	}
	// Up to s2t2: the third layer can only be added at a keyframe, which is requested.
	before := requests
	d.SetTarget(lay(2, 2))
	send(4, -1)
	if d.Current().Spatial != 1 || requests == before {
		t.Fatalf("current %v, %d keyframe requests", d.Current(), requests-before)
	}
	send(8, int(pic))
	if d.Current() != (lay(2, 2)) {
		t.Fatalf("current %v after a keyframe, want s2t2", d.Current())
	}
	// Sequence numbers have no holes where layers were dropped.
	sent := bind.sent()
	for i := 1; i < len(sent); i++ {
		if sent[i].hdr.SequenceNumber != sent[i-1].hdr.SequenceNumber+1 {
			t.Fatalf("sequence gap: %d after %d", sent[i].hdr.SequenceNumber, sent[i-1].hdr.SequenceNumber)
		}
	}
	r := recv.Rates(now)
	if !(r[0][2] > 0 && r[1][2] > r[0][2] && r[2][2] > r[1][2]) {
		t.Fatalf("SVC rates are not cumulative: %v", r)
	}
}

// TestVP9KeepsPictureIDDistances: when temporal layers are dropped, the VP9 pictures forwarded keep
// their picture-id distances (frames reference earlier ones by P_DIFF), unlike VP8, whose dropped
// picture ids are removed.
func TestVP9KeepsPictureIDDistances(t *testing.T) {
	bind := &fakeBinding{record: true}
	recv := NewReceiver(ReceiverConfig{Codec: media.CodecVP9}, func(int, uint32) {})
	d := NewDownTrack(recv, DownTrackConfig{ID: "v", Codec: webrtc.RTPCodecCapability{MimeType: webrtc.MimeTypeVP8, ClockRate: 90000}})
	if _, err := d.Bind(bind); err != nil {
		t.Fatal(err)
	}
	d.Start()
	d.SetTarget(lay(2, 0)) // temporal base layer only: three of every four pictures are dropped
	seq, ts, tl0 := uint16(10), uint32(0), uint8(0)
	for pic := uint16(0); pic < 24; pic++ {
		tid := []uint8{0, 2, 1, 2}[pic%4]
		if tid == 0 && pic > 0 {
			tl0++
		}
		for _, p := range mediatest.VP9Picture(&seq, ts, pic, tl0, tid, pic == 0) {
			recv.WriteRTP(0, p, time.Duration(pic)*33*time.Millisecond)
		}
		ts += 3000
	}
	var ids []uint16
	for _, p := range bind.sent() {
		if f, _ := media.ParseVP9(p.payload); f.SID == 0 {
			id, _ := f.PictureID(p.payload)
			ids = append(ids, id)
		}
	}
	if len(ids) < 4 {
		t.Fatalf("forwarded %d base-layer pictures, want at least 4", len(ids))
	}
	for i := 1; i < len(ids); i++ {
		if ids[i]-ids[i-1] != 4 {
			t.Fatalf("picture ids %v: forwarded VP9 pictures must stay 4 apart, as sent", ids)
		}
	}
}

package sfu

import (
	"sync"
	"testing"
	"time"

	"github.com/pion/rtcp"
	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/internal/media"
)

// TestPausedVideoResumesAtAKeyframe: a paused video down-track sends nothing; resumed, it waits
// for (and asks for) a keyframe, since the subscriber missed the pictures meanwhile, and its
// numbering goes on without a hole.
func TestPausedVideoResumesAtAKeyframe(t *testing.T) {
	bind := &fakeBinding{record: true}
	recv, d, kf, src := newSimulcastRig(t, bind, false)
	now := time.Second
	pump(recv, src, 5, &now)
	d.SetPaused(true)
	n := len(bind.sent())
	pump(recv, src, 5, &now)
	if len(bind.sent()) != n {
		t.Fatal("a paused down-track forwarded")
	}
	requests := len(kf.layers)
	d.SetPaused(false)
	pump(recv, src, 5, &now)
	if len(kf.layers) == requests {
		t.Fatal("no keyframe asked for after the pause")
	}
	sent := bind.sent()
	if len(sent) == n {
		t.Fatal("nothing forwarded after the keyframe that ended the pause")
	}
	if f, _ := media.ParseVP8(sent[n].payload); !f.Keyframe {
		t.Fatal("the first packet after the pause is not a keyframe")
	}
	c := &outputChecker{t: t}
	c.check(sent, layerByte)
}

// TestDownTrackUnderConcurrency drives one down-track from every goroutine that touches it in the
// server — three layer goroutines of the receiver, the RTCP reader (NACKs, PLIs, reports), the
// allocator (targets, padding), the plugin (pause, switch to another receiver, mute) — for the
// race detector, and checks that what it sent is still one stream without duplicates.
func TestDownTrackUnderConcurrency(t *testing.T) {
	bind := &fakeBinding{rtx: true, record: true}
	recvA := NewReceiver(ReceiverConfig{Codec: media.CodecVP8, Simulcast: true}, nil)
	recvB := NewReceiver(ReceiverConfig{Codec: media.CodecVP8, Simulcast: true}, nil)
	d := NewDownTrack(recvA, DownTrackConfig{ID: "v", Codec: webrtc.RTPCodecCapability{MimeType: webrtc.MimeTypeVP8}, RespondNACK: true})
	if _, err := d.Bind(bind); err != nil {
		t.Fatal(err)
	}
	d.Start()
	done := make(chan struct{})
	var wg sync.WaitGroup
	run := func(f func(i int)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-done:
					return
				default:
				}
				f(i)
				time.Sleep(time.Millisecond)
			}
		}()
	}
	for _, recv := range []*Receiver{recvA, recvB} {
		src := newVP8Source()
		src.keyEvery = 10
		frames := make([][][][]byte, 200)
		for i := range frames {
			frames[i] = src.nextFrame()
		}
		for l := range 3 {
			run(func(i int) {
				for _, p := range frames[i%len(frames)][l] {
					recv.WriteRTP(l, append([]byte(nil), p...), Now())
				}
			})
		}
	}
	run(func(i int) {
		seq := d.SSRC() // any number: most NACKs miss, some hit
		d.HandleRTCP(rtcpOf(t,
			&rtcp.TransportLayerNack{MediaSSRC: 1111, Nacks: []rtcp.NackPair{{PacketID: uint16(seq) + uint16(i)}}},
			&rtcp.PictureLossIndication{MediaSSRC: 1111},
			&rtcp.ReceiverReport{Reports: []rtcp.ReceptionReport{{SSRC: 1111, FractionLost: 10}}},
		), Now())
	})
	run(func(i int) {
		d.SetTarget(lay(int8(i%3), int8(i%3)))
		d.Pad(600)
		d.TakeLoss()
		_ = d.Stats()
	})
	run(func(i int) {
		switch i % 4 {
		case 0:
			d.SetPaused(i%8 == 0)
		case 1:
			recvA.SetMuted(i%3 == 0)
		case 2:
			if i%40 == 2 {
				_ = d.SetReceiver(recvB)
			} else if i%40 == 22 {
				_ = d.SetReceiver(recvA)
			}
		}
	})
	time.Sleep(300 * time.Millisecond)
	close(done)
	wg.Wait()
	seen := map[[2]uint32]bool{}
	for _, p := range bind.sent() {
		if p.hdr.PayloadType != 96 || len(p.payload) == 0 {
			continue // retransmissions over RTX, padding
		}
		k := [2]uint32{p.hdr.SSRC, uint32(p.hdr.SequenceNumber)}
		if seen[k] {
			t.Fatalf("sequence number %d sent twice as media", p.hdr.SequenceNumber)
		}
		seen[k] = true
	}
	if len(seen) == 0 {
		t.Fatal("nothing forwarded")
	}
}

// TestOverlappingWritersOfALayer: two goroutines delivering packets of the same layer at once (a
// publisher made Pion start a second reader of one stream) must not race on the layer's packet,
// which its sinks read: that crashed the server (a sink reading the packet after the other writer
// had cleared it). Each packet is either taken or counted as overlapping. Run with -race.
func TestOverlappingWritersOfALayer(t *testing.T) {
	recv := NewReceiver(ReceiverConfig{Codec: media.CodecVP8, Simulcast: true}, nil)
	for range 4 {
		d := NewDownTrack(recv, DownTrackConfig{ID: "v", Codec: webrtc.RTPCodecCapability{MimeType: webrtc.MimeTypeVP8, ClockRate: 90000}})
		if _, err := d.Bind(&fakeBinding{}); err != nil {
			t.Fatal(err)
		}
		d.SetTarget(lay(0, 2))
		d.Start()
	}
	src := newVP8Source()
	src.layers, src.perFrame = 1, 4
	var frames [][]byte
	for range 32 {
		frames = append(frames, src.nextFrame()[0]...)
	}
	const perWriter = 3000
	var wg sync.WaitGroup
	for w := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, 1500)
			for i := range perWriter {
				n := copy(buf, frames[i%len(frames)])
				media.SetSeq(buf[:n], uint16(2*i+w)) // distinct numbers: no packet is a duplicate
				recv.WriteRTP(0, buf[:n], time.Second+time.Duration(i)*time.Millisecond)
			}
		}()
	}
	wg.Wait()
	st := recv.Stats()
	if st.Packets+st.Overlapping != 2*perWriter || st.MalformedRTP+st.MalformedPayload+st.Duplicates != 0 {
		t.Fatalf("packets neither taken nor counted: %+v", st)
	}
	last := append([]byte(nil), frames[0]...)
	media.SetSeq(last, 2*perWriter)
	recv.WriteRTP(0, last, 5*time.Second) // the layer is free again once both are done
	if recv.Stats().Packets != st.Packets+1 {
		t.Fatal("a layer stayed held after its writers returned")
	}
}

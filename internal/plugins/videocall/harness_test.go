package videocall_test

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pion/interceptor"
	"github.com/pion/rtcp"
	"github.com/pion/rtp"
	"github.com/pion/sdp/v3"
	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/internal/janusclient"
	"github.com/strata-rtc/strata/internal/janusclient/janustest"
	"github.com/strata-rtc/strata/internal/peer/peertest"
	"github.com/strata-rtc/strata/internal/plugins/videocall"
)

// user is a Pion PeerConnection playing a browser in a call, with its videocall handle; it counts
// the packets it receives of each kind.
type user struct {
	t    *testing.T
	name string
	h    *janusclient.Handle
	// sessionID is the Janus session of h; limit the user's downlink (nil: none).
	sessionID uint64
	limit     *peertest.RateLimit
	pc        *webrtc.PeerConnection
	audio     *webrtc.TrackLocalStaticRTP
	video     []*webrtc.TrackLocalStaticRTP // one per simulcast layer, highest first
	rids      []string
	// frameBytes is the size of each video frame per simulcast layer, lowest first (default 120).
	frameBytes []int
	vsender    *webrtc.RTPSender
	lastTag    atomic.Int32    // the layer tag of the newest video packet received
	tagged     [3]atomic.Int64 // video packets received per layer tag ('a', 'b', 'c')
	got        [2]atomic.Int64 // audio, video packets received
	remb       atomic.Uint64   // the newest REMB received
	stop       chan struct{}
	wg         sync.WaitGroup
	stopOnce   *sync.Once
}

func newUser(t *testing.T, c *janusclient.Client, name string, rids ...string) *user {
	t.Helper()
	return newLimitedUser(t, c, name, nil, rids...)
}

// newLimitedUser is newUser whose downlink is limit (nil: none).
func newLimitedUser(t *testing.T, c *janusclient.Client, name string, limit *peertest.RateLimit, rids ...string) *user {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	sess, err := c.Create(ctx)
	if err != nil {
		t.Fatal(err)
	}
	h, err := sess.Attach(ctx, videocall.Package)
	if err != nil {
		t.Fatal(err)
	}
	u := &user{t: t, name: name, h: h, sessionID: sess.ID, rids: rids, limit: limit}
	u.renew()
	return u
}

// renew gives the user a new PeerConnection (a browser's next call), stopping the old one's media.
func (u *user) renew() {
	t := u.t
	t.Helper()
	if u.pc != nil {
		u.halt()
		_ = u.pc.Close()
	}
	api := peertest.BrowserAPI(t)
	if u.limit != nil {
		api = peertest.LimitedBrowserAPI(t, u.limit)
	}
	pc, err := api.NewPeerConnection(webrtc.Configuration{})
	if err != nil {
		t.Fatal(err)
	}
	u.pc, u.stop, u.stopOnce = pc, make(chan struct{}), &sync.Once{}
	stop := u.halt
	t.Cleanup(func() { stop(); _ = pc.Close() })
	u.audio, err = webrtc.NewTrackLocalStaticRTP(webrtc.RTPCodecCapability{MimeType: webrtc.MimeTypeOpus, ClockRate: 48000, Channels: 2}, "audio", u.name)
	if err != nil {
		t.Fatal(err)
	}
	sender, err := pc.AddTrack(u.audio)
	if err != nil {
		t.Fatal(err)
	}
	go u.readFeedback(sender.ReadRTCP)
	u.addVideo()
	pc.OnTrack(u.count)
}

// addVideo adds one VP8 track, or one per rid as simulcast encodings of one sender.
func (u *user) addVideo() {
	t := u.t
	vp8 := webrtc.RTPCodecCapability{MimeType: webrtc.MimeTypeVP8, ClockRate: 90000}
	u.video = nil
	rids := u.rids
	if len(rids) == 0 {
		rids = []string{""}
	}
	for _, rid := range rids {
		var opts []func(*webrtc.TrackLocalStaticRTP)
		if rid != "" {
			opts = append(opts, webrtc.WithRTPStreamID(rid))
		}
		tr, err := webrtc.NewTrackLocalStaticRTP(vp8, "video", u.name, opts...)
		if err != nil {
			t.Fatal(err)
		}
		u.video = append(u.video, tr)
	}
	var err error
	if u.vsender, err = u.pc.AddTrack(u.video[0]); err != nil {
		t.Fatal(err)
	}
	for _, extra := range u.video[1:] {
		if err := u.vsender.AddEncoding(extra); err != nil {
			t.Fatal(err)
		}
	}
	for _, tr := range u.video {
		read := u.vsender.ReadRTCP
		if rid := tr.RID(); rid != "" {
			read = func() ([]rtcp.Packet, interceptor.Attributes, error) { return u.vsender.ReadSimulcastRTCP(rid) }
		}
		go u.readFeedback(read)
	}
}

// count counts the packets of a track strata sends.
func (u *user) count(tr *webrtc.TrackRemote, _ *webrtc.RTPReceiver) {
	n := &u.got[0]
	if tr.Kind() == webrtc.RTPCodecTypeVideo {
		n = &u.got[1]
	}
	buf := make([]byte, 1500)
	var pkt rtp.Packet
	for {
		k, _, err := tr.Read(buf)
		if err != nil {
			return
		}
		n.Add(1)
		if tr.Kind() == webrtc.RTPCodecTypeVideo && pkt.Unmarshal(buf[:k]) == nil && len(pkt.Payload) > 7 {
			tag := pkt.Payload[7]
			u.lastTag.Store(int32(tag))
			if l := int(tag) - 'a'; l >= 0 && l < len(u.tagged) {
				u.tagged[l].Add(1)
			}
		}
	}
}

// readFeedback keeps the newest REMB strata sends (the bitrate cap of set).
func (u *user) readFeedback(read func() ([]rtcp.Packet, interceptor.Attributes, error)) {
	for {
		pkts, _, err := read()
		if err != nil {
			return
		}
		for _, p := range pkts {
			if r, ok := p.(*rtcp.ReceiverEstimatedMaximumBitrate); ok {
				u.remb.Store(uint64(r.Bitrate))
			}
		}
	}
}

// request sends a request and returns the plugindata's "result" (plugin errors as error).
func (u *user) request(body map[string]any, jsep *janusclient.JSEP) (map[string]any, *janusclient.JSEP, error) {
	u.t.Helper()
	data, j, err := janustest.Request(u.t, u.h, body, jsep)
	if err != nil {
		return nil, nil, err
	}
	r, _ := data["result"].(map[string]any)
	return r, j, nil
}

func (u *user) must(body map[string]any, jsep *janusclient.JSEP) (map[string]any, *janusclient.JSEP) {
	u.t.Helper()
	r, j, err := u.request(body, jsep)
	if err != nil {
		u.t.Fatalf("%s %v: %v", u.name, body["request"], err)
	}
	return r, j
}

// wait waits for an unsolicited result event named ev and returns it with its JSEP.
func (u *user) wait(ev string) (map[string]any, *janusclient.JSEP) {
	u.t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		select {
		case e, open := <-u.h.Events():
			if !open {
				u.t.Fatalf("%s: handle closed waiting for %s", u.name, ev)
			}
			if e.PluginData == nil {
				continue
			}
			var d struct {
				Result map[string]any `json:"result"`
			}
			if json.Unmarshal(e.PluginData.Data, &d) == nil && d.Result["event"] == ev {
				return d.Result, e.JSEP
			}
		case <-deadline:
			u.t.Fatalf("%s: no %s event", u.name, ev)
			return nil, nil
		}
	}
}

func (u *user) register() {
	u.t.Helper()
	r, _ := u.must(map[string]any{"request": "register", "username": u.name}, nil)
	if r["event"] != "registered" || r["username"] != u.name {
		u.t.Fatalf("register: %v", r)
	}
}

func (u *user) offer() *janusclient.JSEP {
	u.t.Helper()
	o, err := u.pc.CreateOffer(nil)
	if err != nil {
		u.t.Fatal(err)
	}
	return janustest.CompleteLocal(u.t, u.pc, o)
}

func (u *user) answer(offer *janusclient.JSEP) *janusclient.JSEP {
	u.t.Helper()
	if err := u.pc.SetRemoteDescription(webrtc.SessionDescription{Type: webrtc.SDPTypeOffer, SDP: offer.SDP}); err != nil {
		u.t.Fatal(err)
	}
	a, err := u.pc.CreateAnswer(nil)
	if err != nil {
		u.t.Fatal(err)
	}
	return janustest.CompleteLocal(u.t, u.pc, a)
}

func (u *user) setAnswer(j *janusclient.JSEP) {
	u.t.Helper()
	if j == nil || j.Type != "answer" {
		u.t.Fatalf("%s: want an answer, got %+v", u.name, j)
	}
	if err := u.pc.SetRemoteDescription(webrtc.SessionDescription{Type: webrtc.SDPTypeAnswer, SDP: j.SDP}); err != nil {
		u.t.Fatal(err)
	}
}

// send starts sending VP8 (a keyframe every 10 frames) and Opus every 20 ms.
func (u *user) send() {
	u.wg.Add(1)
	stop := u.stop
	go func() {
		defer u.wg.Done()
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		opus := make([]byte, 60)
		midID, ridID, mid := u.simulcastExtensions()
		seqs := make([]uint16, len(u.video))
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			for j, tr := range u.video {
				layer := len(u.video) - 1 - j
				payloads := u.frame(layer, i)
				for k, payload := range payloads {
					pkt := &rtp.Packet{
						Header: rtp.Header{Version: 2, PayloadType: 96, SequenceNumber: uint16(1000*layer) + seqs[j],
							Timestamp: uint32(3000 * i), Marker: k == len(payloads)-1},
						Payload: payload,
					}
					seqs[j]++
					if len(u.video) > 1 { // a browser marks simulcast packets with mid and rid; Pion does not
						_ = pkt.SetExtension(midID, []byte(mid))
						_ = pkt.SetExtension(ridID, []byte(tr.RID()))
					}
					_ = tr.WriteRTP(pkt)
				}
			}
			_ = u.audio.WriteRTP(&rtp.Packet{Header: rtp.Header{Version: 2, PayloadType: 111, SequenceNumber: uint16(i), Timestamp: uint32(960 * i)}, Payload: opus})
		}
	}()
}

// frame is the VP8 payloads of frame i of a layer: one packet of 120 bytes, or frameBytes[layer]
// bytes in packets of at most 1000 (the first with the S bit, as an encoder splits a frame).
func (u *user) frame(layer, i int) [][]byte {
	size := 120
	if layer < len(u.frameBytes) {
		size = u.frameBytes[layer]
	}
	picID, tag := uint16(100*layer+i)&0x7fff, byte('a'+layer)
	var out [][]byte
	for off := 0; off < size; off += 1000 {
		p := vp8Payload(picID, uint8(i), i%10 == 0, tag, min(1000, size-off))
		if off > 0 {
			p[0] &^= 0x10 // not the start of the frame
		}
		out = append(out, p)
	}
	return out
}

func (u *user) halt() {
	stop := u.stop
	u.stopOnce.Do(func() { close(stop) })
	u.wg.Wait()
}

// simulcastExtensions returns the negotiated mid and rid extension ids and the video mid.
func (u *user) simulcastExtensions() (midID, ridID uint8, mid string) {
	for _, e := range u.vsender.GetParameters().HeaderExtensions {
		switch e.URI {
		case sdp.SDESMidURI:
			midID = uint8(e.ID)
		case sdp.SDESRTPStreamIDURI:
			ridID = uint8(e.ID)
		}
	}
	for _, t := range u.pc.GetTransceivers() {
		if t.Sender() == u.vsender {
			mid = t.Mid()
		}
	}
	return midID, ridID, mid
}

// vp8Payload is a VP8 payload with a picture id, TL0PICIDX, a keyframe flag and a tag byte naming
// the simulcast layer it was sent on.
func vp8Payload(picID uint16, tl0 uint8, keyframe bool, tag byte, size int) []byte {
	p := make([]byte, max(size, 8))
	p[0] = 0x90 // X, S, PID 0
	p[1] = 0xe0 // I, L, T
	p[2], p[3] = 0x80|byte(picID>>8), byte(picID)
	p[4] = tl0
	p[5] = 0x20 // TID 0, Y
	p[6] = 0x01 // inter frame
	if keyframe {
		p[6] = 0x00
	}
	p[7] = tag
	return p
}

// received waits until u has received at least n more packets of each kind than before.
func (u *user) received(n int64, within time.Duration) (audio, video int64) {
	u.t.Helper()
	a0, v0 := u.got[0].Load(), u.got[1].Load()
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		if u.got[0].Load()-a0 >= n && u.got[1].Load()-v0 >= n {
			return u.got[0].Load() - a0, u.got[1].Load() - v0
		}
		time.Sleep(50 * time.Millisecond)
	}
	u.t.Fatalf("%s received %d audio and %d video packets, want %d of each", u.name,
		u.got[0].Load()-a0, u.got[1].Load()-v0, n)
	return 0, 0
}

// connect registers a and b and sets up a call from a to b with media flowing both ways.
func connect(t *testing.T, a, b *user) {
	t.Helper()
	a.register()
	b.register()
	dial(t, a, b)
}

// dial sets up a call from a to b, both registered, and starts their media.
func dial(t *testing.T, a, b *user) {
	t.Helper()
	r, _ := a.must(map[string]any{"request": "call", "username": b.name}, a.offer())
	if r["event"] != "calling" {
		t.Fatalf("call: %v", r)
	}
	in, offer := b.wait("incomingcall")
	if in["username"] != a.name || offer == nil || offer.Type != "offer" {
		t.Fatalf("incomingcall: %v %+v", in, offer)
	}
	r, _ = b.must(map[string]any{"request": "accept"}, b.answer(offer))
	if r["event"] != "accepted" {
		t.Fatalf("accept: %v", r)
	}
	acc, answer := a.wait("accepted")
	if acc["username"] != b.name {
		t.Fatalf("accepted: %v", acc)
	}
	a.setAnswer(answer)
	a.send()
	b.send()
}

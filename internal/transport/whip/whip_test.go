package whip_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pion/rtp"
	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/internal/config"
	"github.com/strata-rtc/strata/internal/janusclient"
	"github.com/strata-rtc/strata/internal/peer/peertest"
	"github.com/strata-rtc/strata/internal/server"
)

// startServer runs a whole strata on loopback with WHIP on, as the other transport tests do.
func startServer(t testing.TB, edit func(*config.Config)) *server.Server {
	t.Helper()
	cfg := config.Default()
	cfg.Transports.HTTP.Listen = "127.0.0.1:0"
	cfg.Transports.WebSocket.Enabled = false
	cfg.Transports.Admin.Enabled = false
	cfg.Media.ICE.Loopback = true
	cfg.Media.ICE.Interfaces = []string{"lo"}
	cfg.Plugins.Streaming.FreePorts()
	if edit != nil {
		edit(cfg)
	}
	srv, err := server.New(cfg, slog.New(slog.DiscardHandler), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	return srv
}

// whipClient is a Pion publisher doing what OBS or a browser WHIP client does.
type whipClient struct {
	pc           *webrtc.PeerConnection
	audio, video *webrtc.TrackLocalStaticRTP
}

func newWHIPClient(t *testing.T) *whipClient {
	t.Helper()
	pc, err := peertest.BrowserAPI(t).NewPeerConnection(webrtc.Configuration{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pc.Close() })
	c := &whipClient{pc: pc}
	if c.audio, err = webrtc.NewTrackLocalStaticRTP(webrtc.RTPCodecCapability{MimeType: webrtc.MimeTypeOpus, ClockRate: 48000, Channels: 2}, "a", "whip"); err != nil {
		t.Fatal(err)
	}
	if c.video, err = webrtc.NewTrackLocalStaticRTP(webrtc.RTPCodecCapability{MimeType: webrtc.MimeTypeVP8, ClockRate: 90000}, "v", "whip"); err != nil {
		t.Fatal(err)
	}
	for _, tr := range []*webrtc.TrackLocalStaticRTP{c.audio, c.video} {
		if _, err := pc.AddTransceiverFromTrack(tr, webrtc.RTPTransceiverInit{Direction: webrtc.RTPTransceiverDirectionSendonly}); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

// offer makes the offer with every candidate in it (non-trickle WHIP, as OBS sends it).
func (c *whipClient) offer(t *testing.T) string {
	t.Helper()
	return peertest.GatheredOffer(t, c.pc)
}

// sendVideo sends VP8 keyframes until ctx ends (a keyframe each time, so any subscriber starts).
func (c *whipClient) sendVideo(ctx context.Context) {
	seq := uint16(0)
	for ts := uint32(0); ctx.Err() == nil; ts += 3000 {
		// VP8 payload descriptor (S=1, PID 0) and a keyframe header (P bit clear).
		payload := []byte{0x10, 0x10, 0x02, 0x00, 0x9d, 0x01, 0x2a, 0x40, 0x01, 0xf0, 0x00, 0, 0, 0, 0, 0}
		_ = c.video.WriteRTP(&rtp.Packet{Header: rtp.Header{Version: 2, PayloadType: 96, SequenceNumber: seq, Timestamp: ts, Marker: true}, Payload: payload})
		_ = c.audio.WriteRTP(&rtp.Packet{Header: rtp.Header{Version: 2, PayloadType: 111, SequenceNumber: seq, Timestamp: ts * 16 / 30}, Payload: []byte{0xf8, 0xff, 0xfe}})
		seq++
		time.Sleep(30 * time.Millisecond)
	}
}

func do(t *testing.T, method, url, ctype, body string, hdr map[string]string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// participants lists room 1234's publishers over the Janus API.
func participants(t *testing.T, ctx context.Context, h *janusclient.Handle) []uint64 {
	t.Helper()
	ev, err := h.Message(ctx, map[string]any{"request": "listparticipants", "room": 1234}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Participants []struct {
			ID        uint64 `json:"id"`
			Publisher bool   `json:"publisher"`
		} `json:"participants"`
	}
	if err := ev.DecodeData(&d); err != nil {
		t.Fatal(err)
	}
	var ids []uint64
	for _, p := range d.Participants {
		if p.Publisher {
			ids = append(ids, p.ID)
		}
	}
	return ids
}

// TestWHIPPublisherSeenOverJanusAPI publishes with WHIP and subscribes to it with the Janus API:
// the WHIP stream is an ordinary videoroom publisher. DELETE then takes it out of the room.
func TestWHIPPublisherSeenOverJanusAPI(t *testing.T) {
	srv := startServer(t, nil)
	base := "http://" + srv.HTTPAddr()
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()

	pub := newWHIPClient(t)
	resp, answer := do(t, "POST", base+"/whip/endpoint/1234", "application/sdp", pub.offer(t), map[string]string{"Origin": "https://obs.example"})
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("POST: %d %s", resp.StatusCode, answer)
	}
	loc, etag := resp.Header.Get("Location"), resp.Header.Get("ETag")
	if !strings.HasPrefix(loc, "/whip/resource/") || etag == "" || resp.Header.Get("Content-Type") != "application/sdp" {
		t.Fatalf("201 headers: Location %q ETag %q Content-Type %q", loc, etag, resp.Header.Get("Content-Type"))
	}
	if resp.Header.Get("Access-Control-Allow-Origin") != "*" || !strings.Contains(resp.Header.Get("Access-Control-Expose-Headers"), "Location") {
		t.Errorf("CORS headers missing: %v", resp.Header)
	}
	if err := pub.pc.SetRemoteDescription(webrtc.SessionDescription{Type: webrtc.SDPTypeAnswer, SDP: answer}); err != nil {
		t.Fatal(err)
	}
	sendCtx, stopSending := context.WithCancel(ctx)
	defer stopSending()
	go pub.sendVideo(sendCtx)

	sess, lister, feed := waitForPublisher(t, ctx, base)

	subH, err := sess.Attach(ctx, "janus.plugin.videoroom")
	if err != nil {
		t.Fatal(err)
	}
	ev, err := subH.Message(ctx, map[string]any{"request": "join", "ptype": "subscriber", "room": 1234,
		"streams": []map[string]any{{"feed": feed}}}, nil)
	if err != nil || ev.JSEP == nil {
		t.Fatalf("subscribe: %v %v", ev, err)
	}
	sub, err := peertest.BrowserAPI(t).NewPeerConnection(webrtc.Configuration{})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	gotVideo := make(chan struct{}, 1)
	sub.OnTrack(func(tr *webrtc.TrackRemote, _ *webrtc.RTPReceiver) {
		for {
			if _, _, err := tr.ReadRTP(); err != nil {
				return
			}
			if tr.Kind() == webrtc.RTPCodecTypeVideo {
				select {
				case gotVideo <- struct{}{}:
				default:
				}
			}
		}
	})
	if err := sub.SetRemoteDescription(webrtc.SessionDescription{Type: webrtc.SDPTypeOffer, SDP: ev.JSEP.SDP}); err != nil {
		t.Fatal(err)
	}
	a, _ := sub.CreateAnswer(nil)
	gathered := webrtc.GatheringCompletePromise(sub)
	_ = sub.SetLocalDescription(a)
	<-gathered
	if _, err := subH.Message(ctx, map[string]any{"request": "start"}, &janusclient.JSEP{Type: "answer", SDP: sub.LocalDescription().SDP}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-gotVideo:
	case <-ctx.Done():
		t.Fatal("the Janus-API subscriber got no video from the WHIP publisher")
	}

	// A trickle PATCH with a stale ETag is refused; with the right one it is taken.
	frag := "a=ice-ufrag:" + ufragOf(pub.pc.LocalDescription().SDP) + "\r\na=ice-pwd:" + pwdOf(pub.pc.LocalDescription().SDP) +
		"\r\nm=audio 9 UDP/TLS/RTP/SAVPF 111\r\na=mid:0\r\na=end-of-candidates\r\n"
	if resp, body := do(t, "PATCH", base+loc, "application/trickle-ice-sdpfrag", frag, map[string]string{"If-Match": `"nope"`}); resp.StatusCode != http.StatusPreconditionFailed {
		t.Errorf("PATCH with a stale If-Match: %d %s, want 412", resp.StatusCode, body)
	}
	if resp, body := do(t, "PATCH", base+loc, "application/trickle-ice-sdpfrag", frag, map[string]string{"If-Match": etag}); resp.StatusCode != http.StatusNoContent {
		t.Errorf("trickle PATCH: %d %s, want 204", resp.StatusCode, body)
	}

	// ICE restart of the publisher: its media reaches the subscriber again over the new ICE session.
	o, err := pub.pc.CreateOffer(&webrtc.OfferOptions{ICERestart: true})
	if err != nil {
		t.Fatal(err)
	}
	gathered = webrtc.GatheringCompletePromise(pub.pc)
	if err := pub.pc.SetLocalDescription(o); err != nil {
		t.Fatal(err)
	}
	<-gathered
	local := pub.pc.LocalDescription().SDP
	frag = "a=ice-ufrag:" + ufragOf(local) + "\r\na=ice-pwd:" + pwdOf(local) + "\r\nm=audio 9 UDP/TLS/RTP/SAVPF 111\r\na=mid:0\r\n"
	for _, l := range strings.Split(local, "\r\n") {
		if strings.HasPrefix(l, "a=candidate:") {
			frag += l + "\r\n"
		}
	}
	r, body := do(t, "PATCH", base+loc, "application/trickle-ice-sdpfrag", frag, map[string]string{"If-Match": "*"})
	if r.StatusCode != http.StatusOK || r.Header.Get("ETag") == etag {
		t.Fatalf("WHIP ICE restart: %d %q", r.StatusCode, body)
	}
	if err := pub.pc.SetRemoteDescription(webrtc.SessionDescription{Type: webrtc.SDPTypeAnswer, SDP: restartedAnswer(pub.pc.RemoteDescription().SDP, body)}); err != nil {
		t.Fatal(err)
	}
	for pub.pc.ICEConnectionState() != webrtc.ICEConnectionStateConnected && ctx.Err() == nil {
		time.Sleep(20 * time.Millisecond)
	}
	for len(gotVideo) > 0 {
		<-gotVideo
	}
	select {
	case <-gotVideo:
	case <-ctx.Done():
		t.Fatal("the Janus-API subscriber got no video after the WHIP publisher's ICE restart")
	}

	if resp, body := do(t, "DELETE", base+loc, "", "", nil); resp.StatusCode != http.StatusOK {
		t.Fatalf("DELETE: %d %s", resp.StatusCode, body)
	}
	for len(participants(t, ctx, lister)) != 0 && ctx.Err() == nil {
		time.Sleep(50 * time.Millisecond)
	}
	if ctx.Err() != nil {
		t.Fatal("the WHIP publisher is still in the room after DELETE")
	}
	if resp, _ := do(t, "DELETE", base+loc, "", "", nil); resp.StatusCode != http.StatusNotFound {
		t.Errorf("second DELETE: %d, want 404", resp.StatusCode)
	}
}

func ufragOf(sdp string) string { return attr(sdp, "a=ice-ufrag:") }
func pwdOf(sdp string) string   { return attr(sdp, "a=ice-pwd:") }

func attr(sdp, prefix string) string {
	for _, l := range strings.Split(sdp, "\r\n") {
		if v, ok := strings.CutPrefix(l, prefix); ok {
			return v
		}
	}
	return ""
}

// publishWHIP publishes into room 1234 with WHIP and sends media until the test ends; it returns
// the resource's URL.
func publishWHIP(t *testing.T, ctx context.Context, base string) string {
	t.Helper()
	pub := newWHIPClient(t)
	resp, answer := do(t, "POST", base+"/whip/endpoint/1234", "application/sdp", pub.offer(t), nil)
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("WHIP POST: %d %s", resp.StatusCode, answer)
	}
	if err := pub.pc.SetRemoteDescription(webrtc.SessionDescription{Type: webrtc.SDPTypeAnswer, SDP: answer}); err != nil {
		t.Fatal(err)
	}
	sendCtx, stop := context.WithCancel(ctx)
	t.Cleanup(stop)
	go pub.sendVideo(sendCtx)
	return resp.Header.Get("Location")
}

// whepViewer is a Pion WHEP client: recvonly audio and video, as a browser or whepsrc offers.
type whepViewer struct {
	pc    *webrtc.PeerConnection
	video chan struct{}
}

func newWHEPViewer(t *testing.T) *whepViewer {
	t.Helper()
	pc, err := peertest.BrowserAPI(t).NewPeerConnection(webrtc.Configuration{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pc.Close() })
	v := &whepViewer{pc: pc, video: make(chan struct{}, 1)}
	for _, k := range []webrtc.RTPCodecType{webrtc.RTPCodecTypeAudio, webrtc.RTPCodecTypeVideo} {
		if _, err := pc.AddTransceiverFromKind(k, webrtc.RTPTransceiverInit{Direction: webrtc.RTPTransceiverDirectionRecvonly}); err != nil {
			t.Fatal(err)
		}
	}
	pc.OnTrack(func(tr *webrtc.TrackRemote, _ *webrtc.RTPReceiver) {
		for {
			if _, _, err := tr.ReadRTP(); err != nil {
				return
			}
			if tr.Kind() == webrtc.RTPCodecTypeVideo {
				select {
				case v.video <- struct{}{}:
				default:
				}
			}
		}
	})
	return v
}

// watch POSTs the viewer's offer to a WHEP endpoint and applies the answer.
func (v *whepViewer) watch(t *testing.T, url string) *http.Response {
	t.Helper()
	o, err := v.pc.CreateOffer(nil)
	if err != nil {
		t.Fatal(err)
	}
	gathered := webrtc.GatheringCompletePromise(v.pc)
	if err := v.pc.SetLocalDescription(o); err != nil {
		t.Fatal(err)
	}
	<-gathered
	resp, answer := do(t, "POST", url, "application/sdp", v.pc.LocalDescription().SDP, nil)
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("WHEP POST %s: %d %s", url, resp.StatusCode, answer)
	}
	if err := v.pc.SetRemoteDescription(webrtc.SessionDescription{Type: webrtc.SDPTypeAnswer, SDP: answer}); err != nil {
		t.Fatal(err)
	}
	return resp
}

func (v *whepViewer) waitVideo(t *testing.T, ctx context.Context, what string) {
	t.Helper()
	for len(v.video) > 0 {
		<-v.video
	}
	select {
	case <-v.video:
	case <-ctx.Done():
		t.Fatalf("%s: no video", what)
	}
}

// TestWHEPWatchesAWHIPPublisher watches a WHIP publisher over WHEP, the room's first and by id, and
// restarts ICE with a PATCH: the viewer's media comes back on the new ICE session.
func TestWHEPWatchesAWHIPPublisher(t *testing.T) {
	srv := startServer(t, nil)
	base := "http://" + srv.HTTPAddr()
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	publishWHIP(t, ctx, base)

	for {
		// The publisher is listed once its PeerConnection is up; until then there is nothing to watch.
		r, body := do(t, "POST", base+"/whep/endpoint/1234", "application/sdp", offerSDP(t), nil)
		if r.StatusCode == http.StatusCreated {
			_, _ = do(t, "DELETE", base+r.Header.Get("Location"), "", "", nil)
			break
		}
		if r.StatusCode != http.StatusNotFound || ctx.Err() != nil {
			t.Fatalf("WHEP before the publisher is up: %d %s", r.StatusCode, body)
		}
		time.Sleep(100 * time.Millisecond)
	}
	first := newWHEPViewer(t)
	resp := first.watch(t, base+"/whep/endpoint/1234")
	first.waitVideo(t, ctx, "WHEP viewer of the room's first publisher")
	loc := resp.Header.Get("Location")
	if !strings.HasPrefix(loc, "/whep/resource/") {
		t.Fatalf("Location %q", loc)
	}

	// ICE restart as RFC 9725 4.3.2 has it: the client's new credentials and candidates in an
	// sdpfrag with If-Match "*"; 200 with the server's new ones and a new ETag; media flows again.
	o, err := first.pc.CreateOffer(&webrtc.OfferOptions{ICERestart: true})
	if err != nil {
		t.Fatal(err)
	}
	gathered := webrtc.GatheringCompletePromise(first.pc)
	if err := first.pc.SetLocalDescription(o); err != nil {
		t.Fatal(err)
	}
	<-gathered
	local := first.pc.LocalDescription().SDP
	frag := "a=ice-ufrag:" + ufragOf(local) + "\r\na=ice-pwd:" + pwdOf(local) + "\r\nm=audio 9 UDP/TLS/RTP/SAVPF 0\r\na=mid:0\r\n"
	for _, l := range strings.Split(local, "\r\n") {
		if strings.HasPrefix(l, "a=candidate:") {
			frag += l + "\r\n"
		}
	}
	r, body := do(t, "PATCH", base+loc, "application/trickle-ice-sdpfrag", frag, map[string]string{"If-Match": "*"})
	if r.StatusCode != http.StatusOK || r.Header.Get("Content-Type") != "application/trickle-ice-sdpfrag" ||
		ufragOf(body) == "" || r.Header.Get("ETag") == resp.Header.Get("ETag") {
		t.Fatalf("ICE restart: %d %q ETag %q -> %q", r.StatusCode, body, resp.Header.Get("ETag"), r.Header.Get("ETag"))
	}
	answer := restartedAnswer(first.pc.RemoteDescription().SDP, body)
	if err := first.pc.SetRemoteDescription(webrtc.SessionDescription{Type: webrtc.SDPTypeAnswer, SDP: answer}); err != nil {
		t.Fatal(err)
	}
	first.waitVideo(t, ctx, "WHEP viewer after an ICE restart")
	if r, _ := do(t, "PATCH", base+loc, "application/trickle-ice-sdpfrag", "a=end-of-candidates\r\n", map[string]string{"If-Match": resp.Header.Get("ETag")}); r.StatusCode != http.StatusPreconditionFailed {
		t.Errorf("PATCH with the ETag of before the restart: %d, want 412", r.StatusCode)
	}

	// By publisher id.
	var feed uint64
	c, err := janusclient.Dial(ctx, base+"/janus")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	sess, _ := c.Create(ctx)
	h, _ := sess.Attach(ctx, "janus.plugin.videoroom")
	feed = participants(t, ctx, h)[0]
	byID := newWHEPViewer(t)
	byID.watch(t, base+"/whep/endpoint/1234/"+strconv.FormatUint(feed, 10))
	byID.waitVideo(t, ctx, "WHEP viewer of a publisher by id")
	if r, _ := do(t, "POST", base+"/whep/endpoint/1234/"+strconv.FormatUint(feed+2, 10), "application/sdp", offerSDP(t), nil); r.StatusCode != http.StatusNotFound {
		t.Errorf("WHEP of an unknown publisher: %d, want 404", r.StatusCode)
	}
}

// offerSDP is a recvonly offer from a throwaway client, for requests whose answer is not used.
func offerSDP(t *testing.T) string {
	t.Helper()
	v := newWHEPViewer(t)
	o, err := v.pc.CreateOffer(nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := v.pc.SetLocalDescription(o); err != nil {
		t.Fatal(err)
	}
	return v.pc.LocalDescription().SDP
}

// restartedAnswer is the previous answer with the credentials and candidates of the server's
// sdpfrag, as a WHIP/WHEP client builds it after an ICE restart.
func restartedAnswer(prev, frag string) string {
	var cands []string
	for _, l := range strings.Split(frag, "\r\n") {
		if strings.HasPrefix(l, "a=candidate:") {
			cands = append(cands, l)
		}
	}
	var b strings.Builder
	for _, l := range strings.Split(strings.TrimSpace(prev), "\r\n") {
		switch {
		case strings.HasPrefix(l, "a=ice-ufrag:"):
			l = "a=ice-ufrag:" + ufragOf(frag)
		case strings.HasPrefix(l, "a=ice-pwd:"):
			l = "a=ice-pwd:" + pwdOf(frag)
		case strings.HasPrefix(l, "a=candidate:"), l == "a=end-of-candidates":
			continue
		}
		b.WriteString(l + "\r\n")
		if strings.HasPrefix(l, "a=mid:") {
			for _, c := range cands {
				b.WriteString(c + "\r\n")
			}
		}
	}
	return b.String()
}

// freeUDPPort is a port nothing listens on right now.
func freeUDPPort(t *testing.T) int {
	t.Helper()
	c, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	return c.LocalAddr().(*net.UDPAddr).Port
}

// TestWHEPWatchesAMountpoint watches streaming mountpoint 1 over WHEP while plain RTP VP8 comes in
// on its video port.
func TestWHEPWatchesAMountpoint(t *testing.T) {
	audio, video := freeUDPPort(t), freeUDPPort(t)
	srv := startServer(t, func(c *config.Config) {
		c.Plugins.Streaming.Mountpoints[0].AudioPort = &audio
		c.Plugins.Streaming.Mountpoints[0].VideoPort = &video
	})
	base := "http://" + srv.HTTPAddr()
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	conn, err := net.Dial("udp", net.JoinHostPort("127.0.0.1", strconv.Itoa(video)))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	go func() {
		for seq := uint16(0); ctx.Err() == nil; seq++ {
			p := rtp.Packet{Header: rtp.Header{Version: 2, PayloadType: 100, SequenceNumber: seq, Timestamp: uint32(seq) * 3000, SSRC: 0x1234, Marker: true},
				Payload: []byte{0x10, 0x10, 0x02, 0x00, 0x9d, 0x01, 0x2a, 0x40, 0x01, 0xf0, 0x00, 0, 0, 0, 0, 0}}
			b, _ := p.Marshal()
			_, _ = conn.Write(b)
			time.Sleep(30 * time.Millisecond)
		}
	}()
	v := newWHEPViewer(t)
	resp := v.watch(t, base+"/whep/endpoint/mountpoint/1")
	if !strings.HasPrefix(resp.Header.Get("Location"), "/whep/resource/") {
		t.Fatalf("Location %q", resp.Header.Get("Location"))
	}
	v.waitVideo(t, ctx, "WHEP viewer of mountpoint 1")
	if r, body := do(t, "POST", base+"/whep/endpoint/mountpoint/999", "application/sdp", offerSDP(t), nil); r.StatusCode != http.StatusNotFound {
		t.Errorf("WHEP of an unknown mountpoint: %d %s, want 404", r.StatusCode, body)
	}
	if r, _ := do(t, "DELETE", base+resp.Header.Get("Location"), "", "", nil); r.StatusCode != http.StatusOK {
		t.Errorf("DELETE: %d", r.StatusCode)
	}
}

// waitForPublisher dials the Janus API at base, attaches a videoroom handle in a new session and
// waits until room 1234 lists exactly one publisher; it returns the session, that handle and the
// publisher's id (the client closes with the test).
func waitForPublisher(t *testing.T, ctx context.Context, base string) (*janusclient.Session, *janusclient.Handle, uint64) {
	t.Helper()
	c, err := janusclient.Dial(ctx, base+"/janus")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	sess, err := c.Create(ctx)
	if err != nil {
		t.Fatal(err)
	}
	h, err := sess.Attach(ctx, "janus.plugin.videoroom")
	if err != nil {
		t.Fatal(err)
	}
	for ctx.Err() == nil {
		if ids := participants(t, ctx, h); len(ids) == 1 {
			return sess, h, ids[0]
		}
		time.Sleep(100 * time.Millisecond) // publishing once the PeerConnection is up
	}
	t.Fatal("no publisher in room 1234")
	return nil, nil, 0
}

package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
	"github.com/gorilla/websocket"
	"github.com/pion/rtp"
	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/internal/config"
	"github.com/strata-rtc/strata/internal/janusclient"
	"github.com/strata-rtc/strata/internal/transport/adminapi"
)

// adminWSConfig is the echo server's configuration with the admin WebSocket on a free loopback port
// and captures in a temporary directory.
func adminWSConfig(t *testing.T) *config.Config {
	cfg := config.Default()
	cfg.Transports.HTTP.Listen = "127.0.0.1:0"
	cfg.Transports.WebSocket.Listen = "127.0.0.1:0"
	cfg.Transports.Admin.Listen = "127.0.0.1:0"
	cfg.Transports.Admin.AdminSecret = testAdminSecret
	cfg.Transports.Admin.WebSocket.Enabled = true
	cfg.Transports.Admin.WebSocket.Listen = "127.0.0.1:0"
	cfg.Transports.Admin.PcapDir = t.TempDir()
	cfg.Media.ICE.Loopback = true
	cfg.Media.ICE.Interfaces = []string{"lo"}
	cfg.Plugins.Streaming.FreePorts()
	return cfg
}

// adminWS is a client of the admin API over WebSocket.
type adminWS struct {
	t *testing.T
	c *websocket.Conn
	n int
}

func dialAdminWS(t *testing.T, s *Server) *adminWS {
	t.Helper()
	d := websocket.Dialer{Subprotocols: []string{adminapi.Subprotocol}, HandshakeTimeout: 5 * time.Second}
	c, _, err := d.Dial("ws://"+s.Addr(AdminWS), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &adminWS{t: t, c: c}
}

// do sends a request with the admin secret and a fresh transaction and returns the reply, after
// checking the transaction was echoed.
func (a *adminWS) do(verb string, fields string) map[string]any {
	a.t.Helper()
	a.n++
	tx := fmt.Sprintf("tx%d", a.n)
	req := fmt.Sprintf(`{"janus":%q,"transaction":%q,"admin_secret":%q%s}`, verb, tx, testAdminSecret, fields)
	if err := a.c.WriteMessage(websocket.TextMessage, []byte(req)); err != nil {
		a.t.Fatal(err)
	}
	var m map[string]any
	_ = a.c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if err := a.c.ReadJSON(&m); err != nil {
		a.t.Fatalf("%s: %v", verb, err)
	}
	if m["transaction"] != tx {
		a.t.Fatalf("%s: transaction not echoed in %v", verb, m)
	}
	return m
}

func (a *adminWS) ok(verb, fields string) map[string]any {
	a.t.Helper()
	m := a.do(verb, fields)
	if m["janus"] != "success" {
		a.t.Fatalf("%s%s: %v", verb, fields, m)
	}
	return m
}

func replyCode(m map[string]any) float64 {
	e, _ := m["error"].(map[string]any)
	c, _ := e["code"].(float64)
	return c
}

// TestTokenAuthEndToEnd: with token_auth, tokens added over the admin WebSocket are what the Janus
// API (WebSocket and HTTP) accepts, limited to their plugins.
func TestTokenAuthEndToEnd(t *testing.T) {
	cfg := adminWSConfig(t)
	cfg.General.TokenAuth = true
	srv := startServer(t, cfg)
	admin := dialAdminWS(t, srv)
	admin.ok("add_token", `,"token":"rooms-only","plugins":["janus.plugin.videoroom"]`)
	admin.ok("add_token", `,"token":"everything"`)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for _, url := range []string{"ws://" + srv.WSAddr(), "http://" + srv.HTTPAddr() + "/janus"} {
		anon, err := janusclient.Dial(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := anon.Create(ctx); janusclient.Code(err) != 403 {
			t.Errorf("%s: create without a token: %v, want 403", url, err)
		}
		anon.Close()
		limited, err := janusclient.Dial(ctx, url, janusclient.WithToken("rooms-only"))
		if err != nil {
			t.Fatal(err)
		}
		sess, err := limited.Create(ctx)
		if err != nil {
			t.Fatalf("%s: create with a token: %v", url, err)
		}
		if _, err := sess.Attach(ctx, "janus.plugin.echotest"); janusclient.Code(err) != 405 {
			t.Errorf("%s: attach to another plugin: %v, want 405", url, err)
		}
		if _, err := sess.Attach(ctx, "janus.plugin.videoroom"); err != nil {
			t.Errorf("%s: attach to the token's plugin: %v", url, err)
		}
		limited.Close()
		full, err := janusclient.Dial(ctx, url, janusclient.WithToken("everything"))
		if err != nil {
			t.Fatal(err)
		}
		if sess, err = full.Create(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := sess.Attach(ctx, "janus.plugin.echotest"); err != nil {
			t.Errorf("%s: a token for every plugin: %v", url, err)
		}
		full.Close()
	}
	admin.ok("remove_token", `,"token":"everything"`)
	c, err := janusclient.Dial(ctx, "ws://"+srv.WSAddr(), janusclient.WithToken("everything"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Create(ctx); janusclient.Code(err) != 403 {
		t.Errorf("a removed token: %v, want 403", err)
	}
}

// TestPcapOfEchotestCall captures a real echotest call with start_pcap over the admin WebSocket
// and reads the file back with gopacket: the browser's RTP and the echo, both directions, with the
// call's SSRCs and valid RTP headers, and RTCP both ways.
func TestPcapOfEchotestCall(t *testing.T) {
	cfg := adminWSConfig(t)
	srv := startServer(t, cfg)
	admin := dialAdminWS(t, srv)
	if m := admin.do("info", ""); m["janus"] != "server_info" {
		t.Fatalf("info: %v", m)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := janusclient.Dial(ctx, "ws://"+srv.WSAddr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	sess, err := c.Create(ctx)
	if err != nil {
		t.Fatal(err)
	}
	h, err := sess.Attach(ctx, "janus.plugin.echotest")
	if err != nil {
		t.Fatal(err)
	}
	at := fmt.Sprintf(`,"session_id":%d,"handle_id":%d`, sess.ID, h.ID)
	// Bad requests first: each a clear error, and the server goes on.
	if m := admin.do("stop_pcap", at); replyCode(m) != 490 {
		t.Errorf("stop_pcap before start: %v", m)
	}
	if m := admin.do("start_pcap", at+`,"folder":"../elsewhere"`); replyCode(m) != 490 {
		t.Errorf("start_pcap outside pcap_dir: %v", m)
	}
	if m := admin.do("start_pcap", fmt.Sprintf(`,"session_id":%d,"handle_id":12345`, sess.ID)); replyCode(m) != 459 {
		t.Errorf("start_pcap of an unknown handle: %v", m)
	}
	if m := admin.do("start_pcap", `,"session_id":1,"handle_id":2`); replyCode(m) != 458 {
		t.Errorf("start_pcap in an unknown session: %v", m)
	}
	// Started before the PeerConnection exists: the handle gives it to the one it gets.
	admin.ok("start_pcap", at+`,"folder":"calls","filename":"echo.pcap"`)

	b := newEchoBrowser(t)
	ev, err := h.Message(ctx, map[string]any{"audio": true, "video": true}, &janusclient.JSEP{Type: "offer", SDP: b.offer(t)})
	if err != nil || ev.JSEP == nil {
		t.Fatalf("offer: %v %v", ev, err)
	}
	if err := b.pc.SetRemoteDescription(webrtc.SessionDescription{Type: webrtc.SDPTypeAnswer, SDP: ev.JSEP.SDP}); err != nil {
		t.Fatal(err)
	}
	waitEvent(t, h, "webrtcup", func(e *janusclient.Event) bool { return e.Janus == "webrtcup" })
	stop := make(chan struct{})
	go b.sendMedia(stop)
	for kind, ch := range b.echoed {
		if n := countWithin(ch, 50, 10*time.Second); n < 50 {
			t.Errorf("%d echoed %s packets, want 50", n, kind)
		}
	}
	time.Sleep(1500 * time.Millisecond) // receiver and sender reports go both ways every second or so
	admin.ok("stop_pcap", at)
	close(stop)

	sent := map[uint32]bool{} // the browser's SSRCs: in the capture incoming, and echoed back outgoing
	for _, s := range b.pc.GetSenders() {
		if s.Track() != nil {
			sent[uint32(s.GetParameters().Encodings[0].SSRC)] = true
		}
	}
	echoed := map[uint32]bool{}
	for _, r := range b.pc.GetReceivers() {
		if tr := r.Track(); tr != nil {
			echoed[uint32(tr.SSRC())] = true
		}
	}
	got := readCapture(t, filepath.Join(cfg.Transports.Admin.PcapDir, "calls", "echo.pcap"))
	t.Logf("capture: %d packets; RTP in %v, out %v; RTCP %d in, %d out", got.packets, got.rtpIn, got.rtpOut, got.rtcpIn, got.rtcpOut)
	for ssrc := range sent {
		if got.rtpIn[ssrc] < 20 {
			t.Errorf("incoming SSRC %d: %d RTP packets in the capture, want 20 or more (%+v)", ssrc, got.rtpIn[ssrc], got)
		}
	}
	for ssrc := range echoed {
		if got.rtpOut[ssrc] < 20 {
			t.Errorf("echoed SSRC %d: %d RTP packets in the capture, want 20 or more (%+v)", ssrc, got.rtpOut[ssrc], got)
		}
	}
	if got.rtcpIn == 0 || got.rtcpOut == 0 {
		t.Errorf("RTCP in the capture: %d in, %d out; want both", got.rtcpIn, got.rtcpOut)
	}
	// After stop_pcap the handle can capture again, and the server answers on.
	admin.ok("start_pcap", at+`,"filename":"again.pcap","truncate":20`)
	admin.ok("stop_pcap", at)
	admin.ok("list_sessions", "")
}

type captureCounts struct {
	rtpIn, rtpOut     map[uint32]int
	rtcpIn, rtcpOut   int
	packets, invalids int
}

// readCapture reads a start_pcap file with gopacket's pcapgo reader and decoders, and counts the RTP
// packets per SSRC and direction (RTP headers parsed by pion/rtp) and the RTCP packets.
func readCapture(t *testing.T, path string) captureCounts {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := pcapgo.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	if r.LinkType() != layers.LinkTypeEthernet {
		t.Fatalf("link type %v", r.LinkType())
	}
	cc := captureCounts{rtpIn: map[uint32]int{}, rtpOut: map[uint32]int{}}
	for {
		data, _, err := r.ReadPacketData()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		cc.packets++
		pkt := gopacket.NewPacket(data, layers.LayerTypeEthernet, gopacket.Default)
		udp, _ := pkt.Layer(layers.LayerTypeUDP).(*layers.UDP)
		if udp == nil || len(udp.Payload) < 2 {
			t.Fatalf("packet %d is not UDP", cc.packets)
		}
		in := udp.SrcPort == 1000
		b := udp.Payload
		if b[1] >= 192 && b[1] <= 223 { // RTCP packet types 192-223 (RFC 5761)
			if in {
				cc.rtcpIn++
			} else {
				cc.rtcpOut++
			}
			continue
		}
		var p rtp.Packet
		if err := p.Unmarshal(b); err != nil || p.Version != 2 {
			cc.invalids++
			continue
		}
		if in {
			cc.rtpIn[p.SSRC]++
		} else {
			cc.rtpOut[p.SSRC]++
		}
	}
	if cc.invalids > 0 {
		t.Errorf("%d of %d packets are neither RTCP nor valid RTP", cc.invalids, cc.packets)
	}
	if !strings.HasSuffix(path, ".pcap") || cc.packets == 0 {
		t.Fatalf("%s: no packets", path)
	}
	return cc
}

// TestAdminWSS: the admin API over secure WebSocket alone, listed in info beside the others.
func TestAdminWSS(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	a := newCertPair(t)
	a.write(t, certFile, keyFile)
	cfg := testConfig(t)
	cfg.Transports.Admin.WebSocket.WSS = config.TLSListener{Enabled: true, Listen: "127.0.0.1:0", CertFile: certFile, KeyFile: keyFile}
	s := startServer(t, cfg)
	if s.Addr(AdminWS) != "" {
		t.Fatalf("the plain admin WebSocket listens on %s, want off", s.Addr(AdminWS))
	}
	d := websocket.Dialer{TLSClientConfig: trusting(a.leaf), Subprotocols: []string{adminapi.Subprotocol}, HandshakeTimeout: 5 * time.Second}
	ws, _, err := d.Dial("wss://"+s.Addr(AdminWSS), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	if m := wsCall(t, ws, `{"janus":"list_sessions","transaction":"l","admin_secret":"`+testAdminSecret+`"}`); m["janus"] != "success" || m["transaction"] != "l" {
		t.Fatalf("list_sessions over admin WSS: %v", m)
	}
	m := wsCall(t, ws, `{"janus":"info","transaction":"i"}`)
	if tr, _ := m["transports"].(map[string]any); tr[adminapi.WSTransportName] == nil {
		t.Errorf("info does not list %s: %v", adminapi.WSTransportName, m["transports"])
	}
}

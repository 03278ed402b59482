// The call measures delays in real time: under the race detector, which slows Pion several
// times over, it would measure the detector. The service's other tests run under -race.

//go:build !race

package service_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"sort"
	"sync"
	"time"

	"github.com/pion/ice/v4"
	"github.com/pion/interceptor"
	"github.com/pion/logging"
	"github.com/pion/rtp"
	"github.com/pion/rtp/codecs"
	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/internal/emu/endpoint"
	"github.com/strata-rtc/strata/internal/janusclient"
	"github.com/strata-rtc/strata/internal/videogen"
	"github.com/strata-rtc/strata/internal/vp8enc"
)

// callClient is a Pion PeerConnection in an emulated host's namespace in an echotest call with
// strata: it sends real VP8 (libvpx on generated camera content) at a fixed rate, as a browser
// whose uplink is not the bottleneck would, and records every echoed video packet.
type callClient struct {
	pc    *webrtc.PeerConnection
	mux   ice.UDPMux
	track *webrtc.TrackLocalStaticRTP
	t0    time.Time

	mu                    sync.Mutex
	seen                  map[uint16]bool // sequence numbers received: a retransmission counts once
	packets               []echoed
	sentFrames, sentBytes int
}

// echoed is one echoed video packet: when it arrived, its RTP timestamp and size.
type echoed struct {
	at   time.Duration
	ts   uint32
	size int
	seq  uint16
}

// newCallClient builds the client's PeerConnection with one UDP socket on h's address (opened in
// its namespace), a VP8 track and a data channel (the SCTP association the transfers use).
func newCallClient(h endpoint.Host, t0 time.Time) (*callClient, error) {
	quiet := logging.NewDefaultLoggerFactory()
	quiet.DefaultLogLevel = logging.LogLevelDisabled
	addr := h.Addr()
	var conn net.PacketConn
	if err := h.Do(func() (err error) {
		conn, err = net.ListenUDP("udp4", net.UDPAddrFromAddrPort(netip.AddrPortFrom(addr, 0)))
		return err
	}); err != nil {
		return nil, err
	}
	c := &callClient{mux: webrtc.NewICEUDPMux(quiet.NewLogger("ice"), conn), t0: t0, seen: map[uint16]bool{}}
	var se webrtc.SettingEngine
	se.LoggerFactory = quiet
	se.SetICEUDPMux(c.mux)
	se.SetNetworkTypes([]webrtc.NetworkType{webrtc.NetworkTypeUDP4})
	se.SetICEMulticastDNSMode(ice.MulticastDNSModeDisabled)
	se.SetIPFilter(func(ip net.IP) bool { a, ok := netip.AddrFromSlice(ip); return ok && a.Unmap() == addr })
	me := &webrtc.MediaEngine{}
	if err := me.RegisterDefaultCodecs(); err != nil {
		return nil, err
	}
	reg := &interceptor.Registry{}
	// Pion's defaults include the transport-wide feedback strata's estimate of the path to the
	// client needs; the header extension stamps what the client sends, as a browser does.
	if err := webrtc.RegisterDefaultInterceptors(me, reg); err != nil {
		return nil, err
	}
	if err := webrtc.ConfigureTWCCHeaderExtensionSender(me, reg); err != nil {
		return nil, err
	}
	api := webrtc.NewAPI(webrtc.WithSettingEngine(se), webrtc.WithMediaEngine(me), webrtc.WithInterceptorRegistry(reg))
	pc, err := api.NewPeerConnection(webrtc.Configuration{})
	if err != nil {
		return nil, err
	}
	c.pc = pc
	if c.track, err = webrtc.NewTrackLocalStaticRTP(webrtc.RTPCodecCapability{MimeType: webrtc.MimeTypeVP8}, "video", "call"); err != nil {
		return nil, err
	}
	s, err := pc.AddTrack(c.track)
	if err != nil {
		return nil, err
	}
	go drainRTCP(s)
	if _, err := pc.CreateDataChannel("JanusDataChannel", nil); err != nil {
		return nil, err
	}
	pc.OnTrack(c.receive)
	return c, nil
}

func drainRTCP(s *webrtc.RTPSender) {
	for {
		if _, _, err := s.ReadRTCP(); err != nil {
			return
		}
	}
}

func (c *callClient) close() {
	_ = c.pc.Close()
	_ = c.mux.Close()
}

// call attaches to the echotest and negotiates video and data with it.
func (c *callClient) call(ctx context.Context, jc *janusclient.Client) error {
	sess, err := jc.Create(ctx)
	if err != nil {
		return err
	}
	h, err := sess.Attach(ctx, "janus.plugin.echotest")
	if err != nil {
		return err
	}
	offer, err := c.pc.CreateOffer(nil)
	if err != nil {
		return err
	}
	done := webrtc.GatheringCompletePromise(c.pc)
	if err := c.pc.SetLocalDescription(offer); err != nil {
		return err
	}
	<-done
	ev, err := h.Message(ctx, map[string]any{"audio": false, "video": true, "data": true},
		&janusclient.JSEP{Type: "offer", SDP: c.pc.LocalDescription().SDP})
	if err != nil {
		return err
	}
	if ev.JSEP == nil {
		return fmt.Errorf("echotest: no answer in %+v", ev)
	}
	connected := make(chan struct{})
	var once sync.Once
	c.pc.OnConnectionStateChange(func(s webrtc.PeerConnectionState) {
		if s == webrtc.PeerConnectionStateConnected {
			once.Do(func() { close(connected) })
		}
	})
	if err := c.pc.SetRemoteDescription(webrtc.SessionDescription{Type: webrtc.SDPTypeAnswer, SDP: ev.JSEP.SDP}); err != nil {
		return err
	}
	select {
	case <-connected:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("ICE/DTLS with strata: %w", ctx.Err())
	}
}

// sendVideo encodes generated frames at 30 fps and bitrate until ctx ends. Each frame's RTP
// timestamp is the time it is handed to Pion, so arrival minus timestamp measures the path, not
// the encoder or a sender loop that ran late on a busy machine.
func (c *callClient) sendVideo(ctx context.Context, bitrate float64) error {
	const w, h, fps = 640, 360, 30
	gen, err := videogen.NewNoise(w, h, 1, videogen.NoiseLoop*fps)
	if err != nil {
		return err
	}
	enc, err := vp8enc.New(w, h, fps, bitrate)
	if err != nil {
		return err
	}
	defer func() { _ = enc.Close() }()
	const ticks = 90000 / fps
	pz := rtp.NewPacketizer(1200, 0, 0, &codecs.VP8Payloader{}, rtp.NewRandomSequencer(), 90000)
	frame := time.Second / fps
	tick := time.NewTicker(frame)
	defer tick.Stop()
	start := time.Now()
	// Frames keep their nominal presentation times even when the loop runs late on a busy
	// machine (skipping them makes libvpx's rate control overshoot its target).
	for n := int64(0); ; n++ {
		data, _, err := enc.Encode(gen.Next(), n*90000/fps) // pts in 90 kHz ticks
		if err != nil {
			return err
		}
		if data != nil {
			c.mu.Lock()
			c.sentFrames++
			c.sentBytes += len(data)
			c.mu.Unlock()
			ts := uint32(time.Since(start) * 90000 / time.Second)
			for _, p := range pz.Packetize(data, ticks) {
				p.Timestamp = ts
				if err := c.track.WriteRTP(p); err != nil {
					return err
				}
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}

// receive records the echoed video, each sequence number once.
func (c *callClient) receive(t *webrtc.TrackRemote, _ *webrtc.RTPReceiver) {
	buf := make([]byte, 1500)
	var p rtp.Packet
	for {
		n, _, err := t.Read(buf)
		if err != nil {
			return
		}
		if t.Kind() != webrtc.RTPCodecTypeVideo || p.Unmarshal(buf[:n]) != nil || len(p.Payload) == 0 {
			continue // padding-only packets (strata's probes) carry no video
		}
		c.mu.Lock()
		if !c.seen[p.SequenceNumber] {
			c.seen[p.SequenceNumber] = true
			c.packets = append(c.packets, echoed{at: time.Since(c.t0), ts: p.Timestamp, size: n, seq: p.SequenceNumber})
		}
		c.mu.Unlock()
	}
}

// videoStats are the echoed video's receive rate and percentiles of its one-way delay relative
// to the least of the whole call (arrival minus RTP timestamp: what queues add, plus the frames'
// own serialisation, which is the same in every phase). The baseline is the call's, not the
// window's, so a queue standing through a whole window counts.
type videoStats struct {
	Rate     float64 // bit/s
	P95, P50 time.Duration
}

func (c *callClient) video(from, to time.Duration) videoStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.packets) == 0 {
		return videoStats{}
	}
	origin := c.packets[0].ts // the RTP timestamps' origin: any fixed one will do
	rel := func(p echoed) time.Duration {
		return p.at - time.Duration(int32(p.ts-origin))*time.Second/90000
	}
	base := rel(c.packets[0])
	var bytes int
	var in []time.Duration
	for _, p := range c.packets {
		d := rel(p)
		base = min(base, d)
		if p.at >= from && p.at < to {
			bytes += p.size
			in = append(in, d)
		}
	}
	if len(in) == 0 {
		return videoStats{}
	}
	sort.Slice(in, func(i, j int) bool { return in[i] < in[j] })
	pct := func(q float64) time.Duration { return in[int(q*float64(len(in)-1))] - base }
	return videoStats{Rate: float64(bytes) * 8 / (to - from).Seconds(), P95: pct(0.95), P50: pct(0.5)}
}

// hostHTTP is an HTTP client whose connections are opened in h's namespace.
func hostHTTP(h endpoint.Host) *http.Client {
	dial := func(ctx context.Context, network, addr string) (conn net.Conn, err error) {
		err = h.Do(func() (err error) {
			conn, err = (&net.Dialer{}).DialContext(ctx, network, addr)
			return err
		})
		return conn, err
	}
	return &http.Client{Timeout: 60 * time.Second, Transport: &http.Transport{DialContext: dial}}
}

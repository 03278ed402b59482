package rtsp

import (
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bluenviron/gortsplib/v5"
	"github.com/bluenviron/gortsplib/v5/pkg/auth"
	"github.com/bluenviron/gortsplib/v5/pkg/base"
	"github.com/bluenviron/gortsplib/v5/pkg/description"
	"github.com/bluenviron/gortsplib/v5/pkg/format"
	"github.com/bluenviron/gortsplib/v5/pkg/liberrors"
	"github.com/pion/rtcp"
	"github.com/pion/rtp"

	"github.com/strata-rtc/strata/internal/sfu"
)

// A real SPS and PPS (x264, 160x120 baseline), as an encoder announces them in the SDP.
var (
	testSPS = []byte{0x67, 0x42, 0xc0, 0x0b, 0xd9, 0x02, 0x83, 0xf2, 0x00, 0x00, 0x03, 0x00, 0x02, 0x00, 0x00, 0x03, 0x00, 0x64, 0x1e, 0x28, 0x54, 0x90}
	testPPS = []byte{0x68, 0xcb, 0x83, 0xcb, 0x20}
)

// testServer is an RTSP server of the same library publishing one stream at /live: video (H.264
// or VP8), Opus audio and a medium strata does not forward (MJPEG), with synthetic
// frames paced at 25 fps and 50 packets per second.
type testServer struct {
	t          *testing.T
	srv        *gortsplib.Server
	stream     *gortsplib.ServerStream
	desc       *description.Session
	user, pass string
	plis       atomic.Int64
	ready      chan struct{} // closed once stream is set: handlers wait for it
	stop       chan struct{}
	wg         sync.WaitGroup
}

type serverOpts struct {
	addr       string // "" picks a port
	udp        [2]int // RTP and RTCP ports for UDP (zero: TCP only)
	vp8        bool   // VP8 video instead of H.264
	user, pass string // required credentials (digest only), if set
}

func startServer(t *testing.T, o serverOpts) *testServer {
	t.Helper()
	s := &testServer{t: t, user: o.user, pass: o.pass, stop: make(chan struct{}), ready: make(chan struct{})}
	var video format.Format = &format.H264{PayloadTyp: 96, SPS: testSPS, PPS: testPPS, PacketizationMode: 1}
	if o.vp8 {
		video = &format.VP8{PayloadTyp: 97}
	}
	s.desc = &description.Session{Medias: []*description.Media{
		{Type: description.MediaTypeVideo, Formats: []format.Format{video}},
		{Type: description.MediaTypeVideo, Formats: []format.Format{&format.MJPEG{}}},
		{Type: description.MediaTypeAudio, Formats: []format.Format{&format.Opus{PayloadTyp: 111, ChannelCount: 2}}},
	}}
	if o.addr == "" {
		o.addr = "127.0.0.1:0"
	}
	s.srv = &gortsplib.Server{Handler: s, RTSPAddress: o.addr, ReadTimeout: 2 * time.Second, WriteTimeout: 2 * time.Second}
	if o.udp[0] != 0 {
		s.srv.UDPRTPAddress = "127.0.0.1:" + strconv.Itoa(o.udp[0])
		s.srv.UDPRTCPAddress = "127.0.0.1:" + strconv.Itoa(o.udp[1])
	}
	if o.user != "" {
		s.srv.AuthMethods = []auth.VerifyMethod{auth.VerifyMethodDigestMD5}
	}
	if err := s.srv.Start(); err != nil {
		t.Fatalf("RTSP server: %v", err)
	}
	s.stream = &gortsplib.ServerStream{Server: s.srv, Desc: s.desc}
	if err := s.stream.Initialize(); err != nil {
		t.Fatal(err)
	}
	close(s.ready)
	s.wg.Add(1)
	go s.publish(video)
	t.Cleanup(s.close)
	return s
}

func (s *testServer) addr() string { return s.srv.NetListener().Addr().String() }

func (s *testServer) url() string { return "rtsp://" + s.addr() + "/live" }

// close stops the server: its clients' sessions end.
func (s *testServer) close() {
	select {
	case <-s.stop:
		return
	default:
	}
	close(s.stop)
	s.wg.Wait()
	s.stream.Close()
	s.srv.Close()
}

// publish writes 25 video frames (a keyframe every 10th) and 50 Opus packets per second.
func (s *testServer) publish(video format.Format) {
	defer s.wg.Done()
	var encode func(n int) ([]*rtp.Packet, error)
	switch v := video.(type) {
	case *format.H264:
		enc, err := v.CreateEncoder()
		if err != nil {
			panic(err)
		}
		encode = func(n int) ([]*rtp.Packet, error) {
			nalu := append([]byte{0x41}, make([]byte, 300)...) // non-IDR slice
			if n%10 == 0 {
				nalu = append([]byte{0x65}, make([]byte, 3000)...) // IDR, cut into FU-As
			}
			return enc.Encode([][]byte{nalu})
		}
	case *format.VP8:
		enc, err := v.CreateEncoder()
		if err != nil {
			panic(err)
		}
		encode = func(n int) ([]*rtp.Packet, error) {
			frame := make([]byte, 200)
			frame[0] = 0x01 // interframe
			if n%10 == 0 {
				frame[0] = 0x00
			}
			return enc.Encode(frame)
		}
	}
	opus := &rtp.Packet{Header: rtp.Header{Version: 2, PayloadType: 111, SSRC: 0x0b05, SequenceNumber: 100}, Payload: []byte{0xfc, 0xff, 0xfe}}
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for n := 0; ; n++ {
		select {
		case <-s.stop:
			return
		case <-tick.C:
		}
		opus.SequenceNumber++
		opus.Timestamp += 960
		_ = s.stream.WritePacketRTP(s.desc.Medias[2], opus)
		if n%2 == 0 {
			pkts, err := encode(n / 2)
			if err != nil {
				panic(err)
			}
			for _, p := range pkts {
				p.Timestamp = uint32(n/2) * 3600
				_ = s.stream.WritePacketRTP(s.desc.Medias[0], p)
			}
		}
	}
}

func (s *testServer) allowed(ctx *gortsplib.ServerConn, req *base.Request, path string) (*base.Response, error) {
	<-s.ready
	if s.user != "" && !ctx.VerifyCredentials(req, s.user, s.pass) {
		return &base.Response{StatusCode: base.StatusUnauthorized}, liberrors.ErrServerAuth{}
	}
	if path != "/live" {
		return &base.Response{StatusCode: base.StatusNotFound}, nil
	}
	return &base.Response{StatusCode: base.StatusOK}, nil
}

func (s *testServer) OnDescribe(ctx *gortsplib.ServerHandlerOnDescribeCtx) (*base.Response, *gortsplib.ServerStream, error) {
	res, err := s.allowed(ctx.Conn, ctx.Request, ctx.Path)
	return res, s.stream, err
}

func (s *testServer) OnSetup(ctx *gortsplib.ServerHandlerOnSetupCtx) (*base.Response, *gortsplib.ServerStream, error) {
	res, err := s.allowed(ctx.Conn, ctx.Request, ctx.Path)
	return res, s.stream, err
}

func (s *testServer) OnPlay(ctx *gortsplib.ServerHandlerOnPlayCtx) (*base.Response, error) {
	ctx.Session.OnPacketRTCPAny(func(_ *description.Media, p rtcp.Packet) {
		if _, ok := p.(*rtcp.PictureLossIndication); ok {
			s.plis.Add(1)
		}
	})
	return &base.Response{StatusCode: base.StatusOK}, nil
}

// capture is a Sink keeping the sequence numbers, SSRCs and timestamps of what it gets.
type capture struct {
	mu   sync.Mutex
	seqs []uint16
	ssrc []uint32
	ts   []uint32
	pts  []uint8
}

func (c *capture) WriteRTP(p *sfu.Packet) {
	c.mu.Lock()
	c.seqs = append(c.seqs, p.Header.Seq)
	c.ssrc = append(c.ssrc, p.Header.SSRC)
	c.ts = append(c.ts, p.Header.Timestamp)
	c.pts = append(c.pts, p.Header.PayloadType)
	c.mu.Unlock()
}

func (c *capture) Resync() {}

func (c *capture) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.seqs)
}

// waitFor polls cond for up to 10 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// freeUDPPair finds two consecutive free UDP ports, the first even (RTP, RTCP).
func freeUDPPair(t *testing.T) [2]int {
	t.Helper()
	for range 50 {
		a, err := net.ListenPacket("udp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		p := a.LocalAddr().(*net.UDPAddr).Port
		a.Close()
		if p%2 != 0 || p > 65000 {
			continue
		}
		b, err := net.ListenPacket("udp", "127.0.0.1:"+strconv.Itoa(p+1))
		if err != nil {
			continue
		}
		b.Close()
		return [2]int{p, p + 1}
	}
	t.Fatal("no free UDP port pair")
	return [2]int{}
}

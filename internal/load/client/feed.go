package client

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"sync"
	"time"

	"github.com/pion/rtp"

	"github.com/strata-rtc/strata/internal/load/mediasrc"
)

// FeedTarget is where a plain-RTP feed sends: a streaming mountpoint's UDP ports on Host. A zero
// port sends nothing of that kind; VideoRTCP, when set, is the mountpoint's video RTCP port, which
// the feed latches (an RTCP packet a second, as a real source's reports) so that the server can
// send keyframe requests back to it.
type FeedTarget struct {
	Host                    string
	Audio, Video, VideoRTCP int
	AudioPT, VideoPT        uint8
}

// Feed sends a publisher's synthetic media (the Opus clip and the first VP8 layer) as plain RTP
// to a streaming mountpoint, paced in real time from one goroutine by the same Pacer the WebRTC
// publishers use; a PLI or FIR arriving on the video RTCP socket makes the video skip to its next
// keyframe. Sending allocates nothing per packet.
type Feed struct {
	env   *Env
	pacer *mediasrc.Pacer
	audio *rtpConn
	video *rtpConn
	rtcp  *net.UDPConn

	stop chan struct{}
	wg   sync.WaitGroup
	once sync.Once
}

// StartFeed opens the sockets and starts sending env's media to t until Close.
func StartFeed(env *Env, t FeedTarget) (*Feed, error) {
	ip, err := resolve(t.Host)
	if err != nil {
		return nil, err
	}
	f := &Feed{env: env, stop: make(chan struct{})}
	var writers []mediasrc.Writer
	var audio mediasrc.Writer
	if t.Audio > 0 && env.Media.Audio != nil {
		if f.audio, err = dialRTP(ip, t.Audio, t.AudioPT); err != nil {
			return nil, err
		}
		audio = f.audio
	}
	if t.Video > 0 && len(env.Media.Video) > 0 {
		if f.video, err = dialRTP(ip, t.Video, t.VideoPT); err != nil {
			f.closeSockets()
			return nil, err
		}
		writers = []mediasrc.Writer{f.video}
	}
	if audio == nil && writers == nil {
		return nil, errors.New("feed: nothing to send (no audio or video port)")
	}
	if t.VideoRTCP > 0 && f.video != nil {
		if f.rtcp, err = net.DialUDP("udp", nil, &net.UDPAddr{IP: ip, Port: t.VideoRTCP}); err != nil {
			f.closeSockets()
			return nil, fmt.Errorf("feed: video RTCP: %w", err)
		}
	}
	f.pacer = mediasrc.NewPacer(env.Media, audio, writers, env.Now())
	f.wg.Add(1)
	go f.send()
	if f.rtcp != nil {
		f.wg.Add(2)
		go f.latchRTCP()
		go f.readRTCP()
	}
	return f, nil
}

// send paces the media until Close.
func (f *Feed) send() {
	defer f.wg.Done()
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-f.stop:
			return
		case <-t.C:
		}
		next := f.pacer.Step(f.env.Now())
		t.Reset(max(next-f.env.Now(), 0))
	}
}

// latchRTCP sends an empty receiver report from the video's RTCP socket every second: a server
// learns where to send keyframe requests from the packets arriving on its RTCP port (Janus does).
func (f *Feed) latchRTCP() {
	defer f.wg.Done()
	rr := [8]byte{0x80, 201, 0, 1} // V=2, RC=0, RR, length 1 (two words)
	ssrc := rand.Uint32()
	rr[4], rr[5], rr[6], rr[7] = byte(ssrc>>24), byte(ssrc>>16), byte(ssrc>>8), byte(ssrc)
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		_, _ = f.rtcp.Write(rr[:]) // the server may not listen yet; the next one latches
		select {
		case <-f.stop:
			return
		case <-t.C:
		}
	}
}

// readRTCP turns keyframe requests (PLI, FIR) on the video's RTCP socket into a keyframe.
func (f *Feed) readRTCP() {
	defer f.wg.Done()
	buf := make([]byte, 1500)
	for {
		n, err := f.rtcp.Read(buf)
		if errors.Is(err, net.ErrClosed) {
			return
		}
		if err != nil {
			continue // ICMP port unreachable before the server listens, and the like
		}
		if WantsKeyframe(buf[:n]) {
			f.pacer.RequestKeyframe(0)
		}
	}
}

// WantsKeyframe reports whether a compound RTCP packet holds a PLI (RFC 4585: payload-specific
// feedback, FMT 1) or a FIR (RFC 5104: FMT 4). It reads only the common headers.
func WantsKeyframe(b []byte) bool {
	for len(b) >= 4 {
		if b[0]>>6 != 2 {
			return false
		}
		fmtCount, pt := b[0]&0x1f, b[1]
		if pt == 206 && (fmtCount == 1 || fmtCount == 4) {
			return true
		}
		n := 4 * (int(b[2])<<8 | int(b[3]) + 1)
		if n > len(b) {
			return false
		}
		b = b[n:]
	}
	return false
}

// Sent returns what has been sent so far.
func (f *Feed) Sent() mediasrc.PacerStats { return f.pacer.Stats() }

// Close stops sending and closes the sockets.
func (f *Feed) Close() {
	f.once.Do(func() {
		close(f.stop)
		f.closeSockets()
		f.wg.Wait()
	})
}

func (f *Feed) closeSockets() {
	for _, c := range []*rtpConn{f.audio, f.video} {
		if c != nil {
			c.conn.Close()
		}
	}
	if f.rtcp != nil {
		f.rtcp.Close()
	}
}

// rtpConn writes RTP packets to a connected UDP socket with a fixed payload type and SSRC (what a
// PeerConnection's track would fill in), marshalling into its own buffer.
type rtpConn struct {
	conn *net.UDPConn
	pt   uint8
	ssrc uint32
	buf  [1500]byte
}

func resolve(host string) (net.IP, error) {
	if ip := net.ParseIP(host); ip != nil {
		return ip, nil
	}
	addrs, err := net.LookupIP(host)
	if err != nil || len(addrs) == 0 {
		return nil, fmt.Errorf("feed: host %q: %v", host, err)
	}
	return addrs[0], nil
}

func dialRTP(ip net.IP, port int, pt uint8) (*rtpConn, error) {
	c, err := net.DialUDP("udp", nil, &net.UDPAddr{IP: ip, Port: port})
	if err != nil {
		return nil, fmt.Errorf("feed: %w", err)
	}
	return &rtpConn{conn: c, pt: pt, ssrc: rand.Uint32()}, nil
}

// WriteRTP sends one packet. The header is copied (the pacer's packet stays untouched), so nothing
// escapes and nothing is allocated.
func (w *rtpConn) WriteRTP(p *rtp.Packet) error {
	h := p.Header
	h.PayloadType, h.SSRC = w.pt, w.ssrc
	n, err := h.MarshalTo(w.buf[:])
	if err != nil {
		return err
	}
	if n+len(p.Payload) > len(w.buf) {
		return errors.New("feed: packet larger than 1500 bytes")
	}
	n += copy(w.buf[n:], p.Payload)
	_, err = w.conn.Write(w.buf[:n])
	return err
}

package rtpbridge

import (
	"net"
	"net/netip"
	"testing"

	"github.com/pion/interceptor"
	"github.com/pion/rtp"
	"github.com/pion/srtp/v3"
	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/internal/media"
	"github.com/strata-rtc/strata/internal/sfu"
)

// benchLeg is an audio leg with PCMU negotiated, sending to a socket nobody reads (the kernel
// drops what overflows it), and SRTP both ways when srtp is set.
func benchLeg(b *testing.B, srtp bool) (*leg, netip.AddrPort) {
	opts := Options{}
	if srtp {
		opts.SRTP = SRTPOptional
	}
	s := &Session{cfg: loopback, opts: opts, log: testLogger()}
	l, err := newLeg(s, webrtc.RTPCodecTypeAudio)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(l.stop)
	sink, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = sink.Close() })
	pcmu := webrtc.RTPCodecParameters{RTPCodecCapability: webrtc.RTPCodecCapability{MimeType: webrtc.MimeTypePCMU, ClockRate: 8000}}
	c := choice{plain: pcmu, browser: pcmu, m: &media.PlainMedia{
		Addr: netip.MustParseAddr("127.0.0.1"), Port: sink.LocalAddr().(*net.UDPAddr).Port, RTCPPort: 9, Direction: "sendrecv"}}
	if srtp {
		c.remoteCrypto = l.local // the peer uses the same key: the benchmark decrypts what it encrypts
	}
	if err := l.apply(&c); err != nil {
		b.Fatal(err)
	}
	l.out.enabled.Store(true)
	return l, sink.LocalAddr().(*net.UDPAddr).AddrPort()
}

func rtpPacket(seq uint16, payload int) []byte {
	p := make([]byte, media.HeaderSize+payload)
	p[0] = 0x80
	media.SetSeq(p, seq)
	media.SetTimestamp(p, uint32(seq)*160)
	media.SetSSRC(p, 0x1234)
	return p
}

// BenchmarkBrowserToPlain: a browser packet through its Receiver into the plain sender (header
// rewritten, SRTP, the datagram sent).
func BenchmarkBrowserToPlain(b *testing.B) {
	for _, srtp := range []bool{false, true} {
		b.Run(map[bool]string{false: "rtp", true: "srtp"}[srtp], func(b *testing.B) {
			l, _ := benchLeg(b, srtp)
			pkt := rtpPacket(1, 160)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				media.SetSeq(pkt, uint16(i))
				l.fromBrowser.WriteRTP(0, pkt, sfu.Now())
			}
			if sent := l.out.packets.Load(); sent < uint64(b.N)*9/10 {
				b.Fatalf("the plain sender sent %d of %d packets", sent, b.N)
			}
		})
	}
}

// BenchmarkPlainToBrowser: a datagram from the plain peer through SRTP, latching, statistics and
// the Receiver to the DownTrack, bound to a writer that stands for Pion's (DTLS-SRTP and the
// socket are Pion's, not the bridge's).
func BenchmarkPlainToBrowser(b *testing.B) {
	for _, secure := range []bool{false, true} {
		b.Run(map[bool]string{false: "rtp", true: "srtp"}[secure], func(b *testing.B) {
			l, from := benchLeg(b, secure)
			var enc *srtp.Context
			if secure {
				var err error
				if enc, err = srtpContext(l.local); err != nil {
					b.Fatal(err)
				}
			}
			pkts := make([][]byte, 1024)
			for i := range pkts {
				pkts[i] = rtpPacket(uint16(i), 160)
				if secure {
					pkts[i], _ = enc.EncryptRTP(nil, pkts[i], nil)
				}
			}
			if _, err := l.down.Bind(discardBinding{}); err != nil {
				b.Fatal(err)
			}
			l.down.Start()
			var sc scratch
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				if i > 0 && i%len(pkts) == 0 && secure {
					b.StopTimer() // SRTP refuses replays: encrypt the next round of sequence numbers
					for j := range pkts {
						p := rtpPacket(uint16(i+j), 160)
						pkts[j], _ = enc.EncryptRTP(pkts[j][:0], p, nil)
					}
					b.StartTimer()
				}
				if !secure {
					media.SetSeq(pkts[i%len(pkts)], uint16(i))
				}
				l.receive(pkts[i%len(pkts)], from, &sc)
			}
			if sent := l.down.Stats().Packets; sent < uint64(b.N)*9/10 {
				b.Fatalf("the DownTrack sent %d of %d packets", sent, b.N)
			}
		})
	}
}

// discardBinding binds a DownTrack to a PeerConnection that negotiated PCMU and drops what is
// written to it.
type discardBinding struct{}

func (discardBinding) CodecParameters() []webrtc.RTPCodecParameters {
	return []webrtc.RTPCodecParameters{{RTPCodecCapability: webrtc.RTPCodecCapability{MimeType: webrtc.MimeTypePCMU, ClockRate: 8000}}}
}
func (discardBinding) HeaderExtensions() []webrtc.RTPHeaderExtensionParameter { return nil }
func (discardBinding) SSRC() webrtc.SSRC                                      { return 1 }
func (discardBinding) SSRCRetransmission() webrtc.SSRC                        { return 0 }
func (discardBinding) SSRCForwardErrorCorrection() webrtc.SSRC                { return 0 }
func (discardBinding) WriteStream() webrtc.TrackLocalWriter                   { return discardWriter{} }
func (discardBinding) ID() string                                             { return "bench" }
func (discardBinding) RTCPReader() interceptor.RTCPReader                     { return nil }

type discardWriter struct{}

func (discardWriter) WriteRTP(_ *rtp.Header, p []byte) (int, error) { return len(p), nil }
func (discardWriter) Write(b []byte) (int, error)                   { return len(b), nil }

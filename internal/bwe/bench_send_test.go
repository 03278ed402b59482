package bwe

import (
	"testing"

	"github.com/pion/interceptor"
	"github.com/pion/rtp"

	"github.com/strata-rtc/strata/cc/gcc"
)

// BenchmarkSendPath is the per-packet cost of stamping and recording an outgoing packet (with the
// real send-side GCC behind it); "probing" tags and counts every packet for a probe cluster.
func BenchmarkSendPath(b *testing.B) {
	for _, probing := range []bool{false, true} {
		name := "media"
		if probing {
			name = "probing"
		}
		b.Run(name, func(b *testing.B) {
			s := NewSendSide(gcc.NewSender(), 0)
			defer s.Close()
			if probing {
				s.Estimator().BeginProbe(1)
			}
			w := s.BindLocalStream(&interceptor.StreamInfo{RTPHeaderExtensions: []interceptor.RTPHeaderExtension{{URI: TransportCCURI, ID: 5}}},
				interceptor.RTPWriterFunc(func(*rtp.Header, []byte, interceptor.Attributes) (int, error) { return 0, nil }))
			h := &rtp.Header{Version: 2, PayloadType: 96, SSRC: 1}
			payload := make([]byte, 1100)
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				h.SequenceNumber++
				if _, err := w.Write(h, payload, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

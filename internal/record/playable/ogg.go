package playable

import (
	"os"
	"time"

	"github.com/pion/rtp"
	"github.com/pion/webrtc/v4/pkg/media/oggwriter"
)

// oggMuxer writes Ogg/Opus through Pion's oggwriter, which counts granules from the packets.
type oggMuxer struct {
	f   *os.File
	w   *oggwriter.Writer
	t   *oggwriter.Track
	pkt rtp.Packet
}

func (m *oggMuxer) start(tracks []*track) error {
	ch := uint16(opusChannels(tracks[0].fmtp))
	w, err := oggwriter.NewWriter(m.f, oggwriter.WithSeekableOutput(m.f), oggwriter.WithSampleRate(opusRate),
		oggwriter.WithChannelCount(ch))
	if err != nil {
		return err
	}
	m.w = w
	m.t, err = w.NewTrack(1)
	return err
}

func (m *oggMuxer) write(_ int, f frame) error {
	m.pkt.Header = rtp.Header{Version: 2, SSRC: 1}
	m.pkt.Payload = f.data
	return m.t.WriteRTP(&m.pkt)
}

// close ends the stream; the oggwriter closes the file.
func (m *oggMuxer) close(time.Duration) error { return m.w.Close() }

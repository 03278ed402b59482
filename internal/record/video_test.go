package record

import (
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pion/rtp"

	"github.com/strata-rtc/strata/internal/load/mediasrc"
	"github.com/strata-rtc/strata/internal/media"
)

// receiverWriter hands the pacer's packets to a receiver at the pacer's time.
type receiverWriter struct {
	r      *recorded
	now    time.Duration
	buf    []byte
	frames int // packets with the marker: the last of each frame
}

func (w *receiverWriter) WriteRTP(p *rtp.Packet) error {
	n, err := p.MarshalTo(w.buf)
	if err != nil {
		return err
	}
	w.r.recv.WriteRTP(0, w.buf[:n], w.r.base+w.now)
	if p.Marker {
		w.frames++
	}
	return nil
}

// Real VP8 (the load generator's libvpx clip, 320x180 at 30 fps, paced as a publisher sends it)
// recorded from a Receiver becomes, through janus-pp-rec, a .webm file whose VP8 stream ffprobe
// reads at its size and length and ffmpeg decodes without an error.
func TestVP8RecordingBecomesWebM(t *testing.T) {
	dir := mediasrc.DefaultDir()
	low := mediasrc.Layers[len(mediasrc.Layers)-1]
	m, err := mediasrc.Load(dir, []mediasrc.Layer{low})
	if err != nil {
		t.Fatal(err)
	}
	r := newRecorded(t, media.CodecVP8, WithDescription("camera"))
	w := &receiverWriter{r: r, buf: make([]byte, media.SlotSize)}
	p := mediasrc.NewPacer(m, nil, []mediasrc.Writer{w}, 0)
	for w.now = 0; w.now < 3*time.Second; w.now = p.Step(w.now) {
	}
	r.close(t)
	st := r.mjr.Stats()
	if st.Dropped != 0 || st.Packets != p.Stats().Packets {
		t.Fatalf("stats %+v, the pacer sent %d packets", st, p.Stats().Packets)
	}
	if info := ppHeader(t, r.path, "a video", "vp8"); info.Type != "v" || info.Description != "camera" {
		t.Fatalf("info header %+v", info)
	}
	out := filepath.Join(t.TempDir(), "out.webm")
	if n := ppCounted(t, r.path, out); uint64(n) != st.Packets {
		t.Fatalf("janus-pp-rec counted %d packets, the recording wrote %d", n, st.Packets)
	}
	probe := tool(t, "ffprobe", "-v", "error", "-select_streams", "v", "-count_frames", "-show_entries",
		"stream=codec_name,width,height,nb_read_frames:format=duration", "-of", "default=noprint_wrappers=1", out)
	t.Logf("ffprobe:\n%s", probe)
	for _, want := range []string{"codec_name=vp8", "width=320", "height=180", fmt.Sprintf("nb_read_frames=%d", w.frames)} {
		if !strings.Contains(probe, want) {
			t.Fatalf("ffprobe does not say %q", want)
		}
	}
	var d float64
	_, after, _ := strings.Cut(probe, "duration=")
	if _, err := fmt.Sscanf(after, "%g", &d); err != nil || math.Abs(d-3) > 0.05 {
		t.Fatalf("duration %g s (%v), want 3", d, err)
	}
	if errs := tool(t, "ffmpeg", "-v", "error", "-i", out, "-f", "null", "-"); errs != "" {
		t.Fatalf("ffmpeg decoding the .webm: %s", errs)
	}
}

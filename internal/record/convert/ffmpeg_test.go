package convert

import (
	"context"
	"errors"
	"net"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/media"
	"github.com/strata-rtc/strata/internal/record"
	"github.com/strata-rtc/strata/internal/sfu"
)

// rtpIn receives one RTP stream on a UDP port into a receiver, from one goroutine, stamping each
// packet with its arrival.
func rtpIn(t *testing.T, recv *sfu.Receiver) (port int, done <-chan int) {
	t.Helper()
	conn, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	conn.SetReadBuffer(1 << 20)
	ch := make(chan int, 1)
	go func() {
		buf := make([]byte, 1500)
		n := 0
		for {
			conn.SetReadDeadline(time.Now().Add(2 * time.Second))
			k, err := conn.Read(buf)
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() && n > 0 || err != nil && !errors.As(err, &ne) {
				ch <- n
				return
			}
			if err == nil {
				recv.WriteRTP(0, buf[:k], sfu.Now())
				n++
			}
		}
	}()
	return conn.LocalAddr().(*net.UDPAddr).Port, ch
}

// ffmpeg sends 10 s of VP8 and Opus over RTP in real time, as a third-party sender does, into two
// receivers recorded by a Session: the live WebM and the conversion of the .mjr files hold both
// tracks, last 10 s, decode without an error, and start together.
func TestFFmpegSenderRecording(t *testing.T) {
	t.Parallel()
	bin, err := exec.LookPath("ffmpeg")
	if err != nil {
		t.Fatalf("ffmpeg is needed (scripts/install-deps.sh test installs it): %v", err)
	}
	dir := t.TempDir()
	s, err := record.NewSession(dir, "ffmpeg", record.SessionOptions{Playable: true})
	if err != nil {
		t.Fatal(err)
	}
	at, _ := s.AddTrack(media.CodecOpus, "")
	vt, _ := s.AddTrack(media.CodecVP8, "")
	arecv := sfu.NewReceiver(sfu.ReceiverConfig{ID: "a", Codec: media.CodecOpus}, nil)
	vrecv := sfu.NewReceiver(sfu.ReceiverConfig{ID: "v", Codec: media.CodecVP8}, nil)
	arecv.AddSink(at)
	vrecv.AddSink(vt)
	aport, adone := rtpIn(t, arecv)
	vport, vdone := rtpIn(t, vrecv)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "-v", "error", "-re",
		"-t", "10", "-f", "lavfi", "-i", "testsrc=size=320x240:rate=30",
		"-t", "10", "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000",
		"-map", "0:v", "-c:v", "libvpx", "-deadline", "realtime", "-b:v", "600k", "-g", "60", "-pix_fmt", "yuv420p",
		"-f", "rtp", "rtp://127.0.0.1:"+strconv.Itoa(vport),
		"-map", "1:a", "-c:a", "libopus", "-b:a", "48k", "-f", "rtp", "rtp://127.0.0.1:"+strconv.Itoa(aport))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("ffmpeg: %v\n%s", err, out)
	}
	na, nv := <-adone, <-vdone
	arecv.RemoveSink(at)
	vrecv.RemoveSink(vt)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	st := s.Stats()
	t.Logf("received %d audio and %d video packets; %+v", na, nv, st)
	checkPlayable(t, st.Path, clipSecs, 0, "vp8", "opus")
	out := filepath.Join(t.TempDir(), "converted.webm")
	cst, err := File(out, at.MJR().Path(), vt.MJR().Path())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("strata rec convert:\n%s", cst.Summary(out))
	checkPlayable(t, out, clipSecs, 0, "vp8", "opus")
}

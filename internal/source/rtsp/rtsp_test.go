package rtsp

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/syncbuf"

	"github.com/strata-rtc/strata/internal/media"
	"github.com/strata-rtc/strata/internal/sfu"
	"github.com/strata-rtc/strata/internal/source"
)

func openCaptured(t *testing.T, cfg Config) (*Source, []*capture) {
	t.Helper()
	s, err := Open(cfg, sfu.ReceiverConfig{ID: "rtsp"})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	var caps []*capture
	for _, tr := range s.Tracks() {
		c := &capture{}
		tr.Recv.AddSink(c)
		caps = append(caps, c)
	}
	return s, caps
}

// TestPlayReconnect pulls H.264 and Opus from an in-test server (leaving its MJPEG medium out),
// asks for a keyframe, then has the server go away and come back: the source reconnects by itself
// and packets flow again into the same Receivers, numbered on without a break; then the server
// comes back with VP8 instead of H.264, and the video track stays silent (logged) while audio
// goes on.
func TestPlayReconnect(t *testing.T) {
	for _, transport := range []string{"tcp", "udp"} {
		t.Run(transport, func(t *testing.T) {
			o := serverOpts{}
			if transport == "udp" {
				o.udp = freeUDPPair(t)
			}
			srv := startServer(t, o)
			o.addr = srv.addr()
			logs := &syncbuf.Buffer{}
			s, caps := openCaptured(t, Config{URL: srv.url(), Transport: transport, AudioPT: 109,
				ReconnectDelay: 100 * time.Millisecond, Timeout: 2 * time.Second,
				Log: slog.New(slog.NewTextHandler(logs, nil))})
			tr := s.Tracks()
			if len(tr) != 2 || tr[0].Kind != source.Video || tr[0].Codec != media.CodecH264 || tr[0].PT != 96 ||
				!strings.Contains(tr[0].Fmtp, "sprop-parameter-sets=Z0LAC9kCg/IAAAMAAgAAAwBkHihUkA==,aMuDyyA=") ||
				!strings.Contains(tr[0].Fmtp, "packetization-mode=1") ||
				tr[1].Kind != source.Audio || tr[1].Codec != media.CodecOpus || tr[1].PT != 109 {
				t.Fatalf("tracks %+v", tr)
			}
			if !strings.Contains(logs.String(), "video JPEG/90000") {
				t.Errorf("the MJPEG medium left out is not logged: %s", logs.String())
			}
			waitFor(t, "video and audio", func() bool { return caps[0].count() > 20 && caps[1].count() > 20 })
			if s.State() != Playing || s.Stats().Connects != 1 {
				t.Fatalf("state %s, stats %+v", s.State(), s.Stats())
			}
			tr[0].Recv.RequestKeyframe(0, sfu.Now())
			waitFor(t, "a PLI at the server", func() bool { return srv.plis.Load() > 0 })

			srv.close()
			waitFor(t, "the disconnection", func() bool { return s.Stats().Disconnects == 1 })
			if s.State() != Reconnecting {
				t.Fatalf("state %s after the server went away", s.State())
			}
			before := caps[1].count()
			time.Sleep(300 * time.Millisecond) // a few failed attempts while the server is away
			srv = startServer(t, o)
			waitFor(t, "packets after reconnecting", func() bool { return caps[0].count() > 40 && caps[1].count() > before+20 })
			if st := s.Stats(); s.State() != Playing || st.Connects != 2 || st.Packets == 0 {
				t.Fatalf("state %s, stats %+v", s.State(), st)
			}
			waitFor(t, "a PLI to the new session", func() bool { return srv.plis.Load() > 0 })
			for i, c := range caps {
				c.mu.Lock()
				for k := 1; k < len(c.seqs); k++ {
					if c.seqs[k] != c.seqs[k-1]+1 && transport == "tcp" {
						t.Fatalf("track %d packet %d: sequence number %d after %d", i, k, c.seqs[k], c.seqs[k-1])
					}
					if c.ssrc[k] != c.ssrc[0] {
						t.Fatalf("track %d: SSRC changed", i)
					}
				}
				c.mu.Unlock()
			}
			for i, c := range caps {
				c.mu.Lock()
				if c.pts[0] != tr[i].PT || c.pts[len(c.pts)-1] != tr[i].PT {
					t.Errorf("track %d: packets with payload type %d, the track's is %d", i, c.pts[0], tr[i].PT)
				}
				c.mu.Unlock()
			}
			if st := tr[0].Recv.Stats(); st.Duplicates != 0 || st.MalformedRTP != 0 || st.MalformedPayload != 0 {
				t.Errorf("video receiver %+v", st)
			}

			// The server comes back with another video codec.
			srv.close()
			waitFor(t, "the second disconnection", func() bool { return s.Stats().Disconnects == 2 })
			o.vp8 = true
			startServer(t, o)
			waitFor(t, "the third session", func() bool { return s.Stats().Connects == 3 })
			video, audio := caps[0].count(), caps[1].count()
			waitFor(t, "audio after the codec change", func() bool { return caps[1].count() > audio+20 })
			if caps[0].count() != video {
				t.Errorf("%d video packets forwarded after the codec changed", caps[0].count()-video)
			}
			if n := strings.Count(logs.String(), "changed a track's codec"); n != 1 {
				t.Errorf("the codec change is logged %d times:\n%s", n, logs.String())
			}
		})
	}
}

// TestOpenErrors: what Open says when it cannot play.
func TestOpenErrors(t *testing.T) {
	srv := startServer(t, serverOpts{user: "viewer", pass: "s3cret"})
	closed := startServer(t, serverOpts{})
	closedURL := closed.url()
	closed.close()
	for _, c := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"bad scheme", Config{URL: "http://example.com/x"}, `unsupported scheme 'http'`},
		{"bad URL", Config{URL: "rtsp://[::1"}, "bad URL"},
		{"bad transport", Config{URL: srv.url(), Transport: "sctp"}, `transport "sctp"`},
		{"refused", Config{URL: closedURL, Timeout: time.Second}, "connection refused"},
		{"no such stream", Config{URL: "rtsp://" + srv.addr() + "/nothing", User: "viewer", Password: "s3cret"}, "no such stream (404"},
		{"no credentials", Config{URL: srv.url()}, "refused the credentials (401"},
		{"wrong password", Config{URL: srv.url(), User: "viewer", Password: "nope"}, "refused the credentials (401"},
	} {
		s, err := Open(c.cfg, sfu.ReceiverConfig{})
		if err == nil {
			s.Close()
			t.Errorf("%s: no error", c.name)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
		if strings.Contains(err.Error(), "s3cret") || strings.Contains(err.Error(), ":nope@") {
			t.Errorf("%s: the error shows the password: %v", c.name, err)
		}
	}

	// Digest authentication with the right credentials, given in the URL or in the config.
	for _, cfg := range []Config{
		{URL: srv.url(), User: "viewer", Password: "s3cret"},
		{URL: "rtsp://viewer:s3cret@" + srv.addr() + "/live"},
	} {
		s, caps := openCaptured(t, cfg)
		waitFor(t, "packets with digest authentication", func() bool { return caps[1].count() > 5 })
		s.Close()
		if s.State() != Closed {
			t.Errorf("state %s after Close", s.State())
		}
	}
}

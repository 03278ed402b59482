package streaming_test

import (
	"sync"
	"testing"
	"time"

	"github.com/bluenviron/gortsplib/v5"
	"github.com/bluenviron/gortsplib/v5/pkg/base"
	"github.com/bluenviron/gortsplib/v5/pkg/description"
	"github.com/bluenviron/gortsplib/v5/pkg/format"
	"github.com/pion/rtp"
)

// relay is an RTSP server of the library strata pulls with: a publisher (ffmpeg) records a
// stream into it with ANNOUNCE and RECORD, readers play it.
type relay struct {
	srv       *gortsplib.Server
	mu        sync.RWMutex
	stream    *gortsplib.ServerStream
	publisher *gortsplib.ServerSession
}

func startRelay(t *testing.T) *relay {
	t.Helper()
	r := &relay{}
	r.srv = &gortsplib.Server{Handler: r, RTSPAddress: "127.0.0.1:0", ReadTimeout: 5 * time.Second, WriteTimeout: 5 * time.Second}
	if err := r.srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		r.mu.Lock()
		if r.stream != nil {
			r.stream.Close()
		}
		r.mu.Unlock()
		r.srv.Close()
	})
	return r
}

func (r *relay) url() string { return "rtsp://" + r.srv.NetListener().Addr().String() + "/live" }

func (r *relay) OnSessionClose(ctx *gortsplib.ServerHandlerOnSessionCloseCtx) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stream != nil && ctx.Session == r.publisher {
		r.stream.Close()
		r.stream = nil
	}
}

func (r *relay) OnDescribe(*gortsplib.ServerHandlerOnDescribeCtx) (*base.Response, *gortsplib.ServerStream, error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if r.stream == nil {
		return &base.Response{StatusCode: base.StatusNotFound}, nil, nil
	}
	return &base.Response{StatusCode: base.StatusOK}, r.stream, nil
}

func (r *relay) OnAnnounce(ctx *gortsplib.ServerHandlerOnAnnounceCtx) (*base.Response, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stream = &gortsplib.ServerStream{Server: r.srv, Desc: ctx.Description}
	if err := r.stream.Initialize(); err != nil {
		return &base.Response{StatusCode: base.StatusInternalServerError}, err
	}
	r.publisher = ctx.Session
	return &base.Response{StatusCode: base.StatusOK}, nil
}

func (r *relay) OnSetup(ctx *gortsplib.ServerHandlerOnSetupCtx) (*base.Response, *gortsplib.ServerStream, error) {
	if ctx.Session.State() == gortsplib.ServerSessionStatePreRecord {
		return &base.Response{StatusCode: base.StatusOK}, nil, nil
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	if r.stream == nil {
		return &base.Response{StatusCode: base.StatusNotFound}, nil, nil
	}
	return &base.Response{StatusCode: base.StatusOK}, r.stream, nil
}

func (r *relay) OnPlay(*gortsplib.ServerHandlerOnPlayCtx) (*base.Response, error) {
	return &base.Response{StatusCode: base.StatusOK}, nil
}

func (r *relay) OnRecord(ctx *gortsplib.ServerHandlerOnRecordCtx) (*base.Response, error) {
	ctx.Session.OnPacketRTPAny(func(m *description.Media, _ format.Format, pkt *rtp.Packet) {
		r.mu.RLock()
		defer r.mu.RUnlock()
		if r.stream != nil {
			_ = r.stream.WritePacketRTP(m, pkt)
		}
	})
	return &base.Response{StatusCode: base.StatusOK}, nil
}

// TestRTSP: an rtsp mountpoint pulls VP8 and Opus that ffmpeg publishes to an RTSP server; a
// viewer decodes the video. A server that does not have the stream is 456 at create.
func TestRTSP(t *testing.T) {
	c := startServer(t, nil)
	admin := attach(t, c)
	r := startRelay(t)
	wantError(t, admin, map[string]any{"request": "create", "type": "rtsp", "url": r.url(), "video": true}, 456, "error creating the source")
	args := append(testsrc("320x180"), videoArgs("vp8", "200k")...)
	args = append(args, audioArgs()...)
	ffmpeg(t, append(args, "-f", "rtsp", "-rtsp_transport", "tcp", r.url())...)
	var created map[string]any
	deadline := time.Now().Add(15 * time.Second)
	for created == nil {
		data, _, err := request2(t, admin, map[string]any{"request": "create", "type": "rtsp", "id": 31, "url": r.url(),
			"audio": true, "video": true, "rtsp_reconnect_delay": 1})
		if err == nil {
			created = data
		} else if time.Now().After(deadline) {
			t.Fatalf("create rtsp: %v", err)
		} else {
			time.Sleep(200 * time.Millisecond) // until ffmpeg has announced the stream
		}
	}
	info, _ := request(t, admin, map[string]any{"request": "info", "id": 31}, nil)
	i := info["info"].(map[string]any)
	if i["rtsp"] != true || i["url"] != r.url() || len(i["media"].([]any)) != 2 {
		t.Fatalf("info: %v", i)
	}
	v := watch(t, c, 31, nil)
	v.waitPackets("v", 1, 15*time.Second)
	v.waitFrames("v", 30, 15*time.Second)
	v.waitPackets("a", 50, 10*time.Second)
	frames, width := v.decodedFrames("v")
	t.Logf("rtsp: %d frames decoded, width %d", frames, width)
	if frames < 30 || width != 320 {
		t.Errorf("%d frames of width %d decoded", frames, width)
	}
}

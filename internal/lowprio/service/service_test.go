package service_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/internal/config"
	"github.com/strata-rtc/strata/internal/gateway"
	"github.com/strata-rtc/strata/internal/janusclient"
	"github.com/strata-rtc/strata/internal/janusclient/janustest"
	"github.com/strata-rtc/strata/internal/lowprio"
	"github.com/strata-rtc/strata/internal/lowprio/dc"
	"github.com/strata-rtc/strata/internal/lowprio/service"
	"github.com/strata-rtc/strata/internal/peer/peertest"
	"github.com/strata-rtc/strata/internal/server"
)

// client is a Pion PeerConnection connected to strata's echotest with a data section only.
type client struct {
	pc  *webrtc.PeerConnection
	srv *server.Server
	h   *janusclient.Handle
	sid uint64
}

func connect(t *testing.T, edit func(*config.LowPrio)) *client {
	t.Helper()
	srv, jc := janustest.Start(t, func(c *config.Config) {
		if edit != nil {
			edit(&c.LowPrio)
		}
	}, janustest.Logger())
	ctx := testContext(t, 5*time.Second)
	sess, err := jc.Create(ctx)
	if err != nil {
		t.Fatal(err)
	}
	h, err := sess.Attach(ctx, "janus.plugin.echotest")
	if err != nil {
		t.Fatal(err)
	}
	pc, err := peertest.BrowserAPI(t).NewPeerConnection(webrtc.Configuration{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pc.Close() })
	if _, err := pc.CreateDataChannel("JanusDataChannel", nil); err != nil {
		t.Fatal(err)
	}
	offer, err := pc.CreateOffer(nil)
	if err != nil {
		t.Fatal(err)
	}
	_, answer := janustest.MustRequest(t, h, map[string]any{"audio": false, "video": false, "data": true},
		janustest.CompleteLocal(t, pc, offer))
	if answer == nil {
		t.Fatal("no answer")
	}
	if err := pc.SetRemoteDescription(webrtc.SessionDescription{Type: webrtc.SDPTypeAnswer, SDP: answer.SDP}); err != nil {
		t.Fatal(err)
	}
	return &client{pc: pc, srv: srv, h: h, sid: sess.ID}
}

func testContext(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// get receives name from strata into w.
func (c *client) get(t *testing.T, name string, w io.Writer) error {
	t.Helper()
	ch, err := c.pc.CreateDataChannel(dc.Label(dc.VerbGet, name), dc.Init())
	if err != nil {
		t.Fatal(err)
	}
	_, err = dc.Receive(testContext(t, 30*time.Second), ch, w, dc.Options{})
	return err
}

// put sends r to strata as name.
func (c *client) put(t *testing.T, name string, r io.Reader) error {
	t.Helper()
	ch, err := c.pc.CreateDataChannel(dc.Label(dc.VerbPut, name), dc.Init())
	if err != nil {
		t.Fatal(err)
	}
	_, err = dc.Send(testContext(t, 30*time.Second), ch, r, dc.Options{})
	return err
}

// transfers is the handle's webrtc.lowprio in handle_info.
func (c *client) transfers(t *testing.T) service.Info {
	t.Helper()
	req := fmt.Sprintf(`{"janus":"handle_info","transaction":"i","admin_secret":%q,"session_id":%d,"handle_id":%d}`,
		c.srv.AdminSecret(), c.sid, c.h.ID)
	raw, err := json.Marshal(c.srv.Gateway().Admin(context.Background(), []byte(req), gateway.Origin{}))
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		Info struct {
			WebRTC struct {
				LowPrio service.Info `json:"lowprio"`
			} `json:"webrtc"`
		} `json:"info"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatalf("handle_info: %v: %s", err, raw)
	}
	return r.Info.WebRTC.LowPrio
}

// waitTransfer waits until handle_info shows the transfer of name ended, and returns it.
func (c *client) waitTransfer(t *testing.T, name string) service.TransferInfo {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		for _, tr := range c.transfers(t).Transfers {
			if tr.Name == name && tr.State != "running" {
				return tr
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("transfer %q did not end: %+v", name, c.transfers(t))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func randomFile(t *testing.T, dir, name string, n int) []byte {
	t.Helper()
	b := make([]byte, n)
	_, _ = rand.Read(b)
	if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return b
}

// TestGetSendsFilesAndGeneratedStreams: a file under lowprio.dir and a generated stream arrive
// byte for byte on two channels of one PeerConnection at once, and handle_info lists both.
func TestGetSendsFilesAndGeneratedStreams(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	want := randomFile(t, filepath.Join(dir, "sub"), "file.bin", 700_000)
	c := connect(t, func(l *config.LowPrio) { l.Dir = dir })
	var got bytes.Buffer
	errs := make(chan error, 2)
	go func() { errs <- c.get(t, "sub/file.bin", &got) }()
	gen := &dc.Verifier{N: 2_000_000}
	go func() { errs <- c.get(t, "gen:2000000", gen) }()
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(got.Bytes(), want) {
		t.Errorf("file: got %d bytes, want the %d of the file", got.Len(), len(want))
	}
	if err := gen.Check(); err != nil {
		t.Error(err)
	}
	for name, size := range map[string]int64{"sub/file.bin": 700_000, "gen:2000000": 2_000_000} {
		tr := c.waitTransfer(t, name)
		if tr.State != "done" || tr.Direction != "get" || tr.Bytes != size || tr.Size != size {
			t.Errorf("handle_info %+v, want get done with %d bytes", tr, size)
		}
	}
}

// TestPutStoresUploads: an upload lands under lowprio.upload_dir under its name only once complete
// (no temporary file left), and an upload of gen:<bytes> is checked byte by byte.
func TestPutStoresUploads(t *testing.T) {
	dir := t.TempDir()
	c := connect(t, func(l *config.LowPrio) { l.UploadDir = dir })
	want := make([]byte, 600_000)
	_, _ = rand.Read(want)
	if err := c.put(t, "up.bin", bytes.NewReader(want)); err != nil {
		t.Fatal(err)
	}
	if tr := c.waitTransfer(t, "up.bin"); tr.State != "done" || tr.Direction != "put" {
		t.Fatalf("handle_info %+v", tr)
	}
	got, err := os.ReadFile(filepath.Join(dir, "up.bin"))
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("stored %d bytes (%v), want the %d sent", len(got), err, len(want))
	}
	if err := c.put(t, "gen:300000", dc.Generated(300_000)); err != nil {
		t.Fatal(err)
	}
	if tr := c.waitTransfer(t, "gen:300000"); tr.State != "done" || tr.Bytes != 300_000 {
		t.Fatalf("handle_info %+v", tr)
	}
	bad := io.MultiReader(dc.Generated(100_000), strings.NewReader("not the pattern"), dc.Generated(100_000))
	_ = c.put(t, "gen:200015", bad) // strata resets the transfer; the client may see that or not
	if tr := c.waitTransfer(t, "gen:200015"); tr.State != "failed" || !strings.Contains(tr.Error, "differs") {
		t.Errorf("a wrong gen: upload: handle_info %+v, want failed: differs", tr)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("upload_dir holds %d entries, want up.bin only", len(entries))
	}
}

// wantReset fails unless err is a RESET from strata whose reason contains reason.
func wantReset(t *testing.T, what string, err error, reason string) {
	t.Helper()
	var re *lowprio.ResetError
	if !errors.As(err, &re) || !strings.Contains(re.Reason, reason) {
		t.Errorf("%s: got %v, want a RESET saying %q", what, err, reason)
	}
}

// TestBadTransfersAreRefusedWithAReason: a bad label, a name outside the directory (by .. or by a
// symbolic link), a missing file, an upload over max_upload and one transfer too many each end
// with a RESET that says why, and the PeerConnection keeps serving.
func TestBadTransfersAreRefusedWithAReason(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	randomFile(t, outside, "secret", 10)
	if err := os.Symlink(filepath.Join(outside, "secret"), filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	c := connect(t, func(l *config.LowPrio) { l.Dir, l.MaxUpload, l.MaxTransfers = dir, 100_000, 1 })
	for name, reason := range map[string]string{
		"missing":       "no such file",
		"link":          "escapes",
		"../x":          "..",
		"gen:12x":       "gen:",
		"/etc/passwd":   "starts with /",
		"sub/../../etc": "..",
	} {
		wantReset(t, "get "+name, c.get(t, name, io.Discard), reason)
	}
	ch, err := c.pc.CreateDataChannel("lowprio:delete:x", dc.Init())
	if err != nil {
		t.Fatal(err)
	}
	_, err = dc.Receive(testContext(t, 10*time.Second), ch, io.Discard, dc.Options{})
	wantReset(t, "verb delete", err, "verb")
	wantReset(t, "put over max_upload", c.put(t, "gen:100001", dc.Generated(100_001)), "max_upload")
	if tr := c.waitTransfer(t, "gen:100001"); tr.State != "refused" {
		t.Errorf("put gen:100001 over max_upload: handle_info %+v, want refused", tr)
	}
	if err := c.put(t, "big", dc.Generated(150_000)); err == nil {
		t.Error("put of 150000 bytes over max_upload 100000 succeeded")
	}
	if tr := c.waitTransfer(t, "big"); tr.State != "failed" || !strings.Contains(tr.Error, "max_upload") {
		t.Errorf("put big over max_upload: handle_info %+v, want failed: max_upload", tr)
	}

	// One transfer runs (a slow reader holds it open); a second is one too many.
	pr, pw := io.Pipe()
	first := make(chan error, 1)
	go func() { first <- c.get(t, "gen:100000000", pw) }()
	if _, err := pr.Read(make([]byte, 1)); err != nil {
		t.Fatal(err)
	}
	wantReset(t, "second transfer", c.get(t, "gen:10", io.Discard), "too many transfers")
	_ = pr.CloseWithError(errors.New("reader gone"))
	if err := <-first; err == nil {
		t.Error("the first transfer ended without error after its reader went")
	}
	c.waitTransfer(t, "gen:100000000")
	v := &dc.Verifier{N: 50_000}
	if err := c.get(t, "gen:50000", v); err != nil || v.Check() != nil {
		t.Fatalf("after the refusals: %v %v", err, v.Check())
	}
	if info := c.transfers(t); info.Refused < 8 {
		t.Errorf("handle_info counts %d refused transfers, want at least 8: %+v", info.Refused, info)
	}
}

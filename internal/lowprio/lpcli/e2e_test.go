package lpcli

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/config"
	"github.com/strata-rtc/strata/internal/janusclient/janustest"
	"github.com/strata-rtc/strata/internal/lowprio/dc"
)

// strata lowprio get and put against a real strata: a generated download checked byte by byte, a
// generated upload (the server checks it), and a file uploaded into lowprio.upload_dir and
// downloaded back from lowprio.dir, identical.
func TestGetAndPutThroughTheServer(t *testing.T) {
	dir := t.TempDir()
	srv, _ := janustest.Start(t, func(c *config.Config) {
		c.LowPrio.Dir, c.LowPrio.UploadDir = dir, dir
	}, janustest.Logger())
	url := "http://" + srv.HTTPAddr() + "/janus"
	run := func(args ...string) string {
		t.Helper()
		var out, errs bytes.Buffer
		if code := Main(append(args[:1:1], append([]string{"-server", url, "-timeout", "60s"}, args[1:]...)...), &out, &errs); code != ExitOK {
			t.Fatalf("strata lowprio %s: exit %d: %s", strings.Join(args, " "), code, errs.String())
		}
		t.Logf("strata lowprio %s:\n%s", strings.Join(args, " "), errs.String())
		return out.String()
	}
	run("get", "gen:3000000")
	run("put", "-variant", "ledbat++", "gen:3000000")

	src := filepath.Join(t.TempDir(), "clip.bin")
	data, _ := io.ReadAll(dc.Generated(1_500_000))
	data[777] ^= 0xff // not the generated stream: the file's own bytes travel
	if err := os.WriteFile(src, data, 0o644); err != nil {
		t.Fatal(err)
	}
	run("put", src, "clip.bin")
	// put returns once the server acknowledged every byte; the server stores the upload when the
	// transfer's channel closes, a moment later (docs/LOWPRIO.md).
	stored := filepath.Join(dir, "clip.bin")
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if st, err := os.Stat(stored); err == nil && st.Size() == int64(len(data)) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the upload was not stored as %s", stored)
		}
	}
	back := filepath.Join(t.TempDir(), "back.bin")
	run("get", "clip.bin", back)
	got, err := os.ReadFile(back)
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("downloaded %d bytes (%v), not the %d uploaded", len(got), err, len(data))
	}
}

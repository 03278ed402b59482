package recording_test

import (
	"errors"
	"log/slog"
	"regexp"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/config"
	"github.com/strata-rtc/strata/internal/record/rectest"
	"github.com/strata-rtc/strata/internal/syncbuf"
)

// mountTmpfs mounts a tmpfs of size bytes on dir for the test; it skips the test where mounting is
// not permitted (not root, or no mount namespace rights).
func mountTmpfs(t *testing.T, dir string, size int) {
	t.Helper()
	err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size="+strconv.Itoa(size))
	if errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.EACCES) {
		t.Skipf("cannot mount a tmpfs here (%v): the full-disk test needs root", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Unmount(dir, syscall.MNT_DETACH) })
}

// A recording on a full disk loses recording data, never media: with the recordings directory a
// 64 KiB tmpfs, a recorded publisher (.mjr files and the playable file) fills it within seconds, and afterwards its subscriber keeps
// receiving, the server keeps answering, and closing the recording logs the packets it dropped
// and the write error.
func TestFullDiskLosesRecordingNotMedia(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	mountTmpfs(t, dir, 64<<10)
	m := rectest.Media(t)
	logs := &syncbuf.Buffer{}
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	c := startServerLogged(t, func(cfg *config.Config) {
		cfg.Plugins.VideoRoom.RecordingsDir = dir
		cfg.Recording.Playable = true
	}, log)
	h := attach(t, c)
	mustRequest(t, h, map[string]any{"request": "create", "room": 7003, "record": true}, nil)
	p := publishAV(t, c, 7003, nil)
	sub := subscribe(t, c, 7003, p.id)
	done := make(chan struct{})
	go func() {
		defer close(done)
		rectest.Send(m, p.audio, p.video, 9*time.Second)
	}()
	full := time.Now().Add(6 * time.Second)
	for {
		var st syscall.Statfs_t
		if err := syscall.Statfs(dir, &st); err != nil {
			t.Fatal(err)
		}
		if st.Bavail == 0 {
			break
		}
		if time.Now().After(full) {
			t.Fatalf("the tmpfs did not fill up (%d blocks free)", st.Bavail)
		}
		time.Sleep(100 * time.Millisecond)
	}
	before := sub.count()
	time.Sleep(2 * time.Second)
	after := sub.count()
	// ~30 video frames and 50 audio packets a second: media flows on at its rate.
	if after-before < 100 {
		t.Fatalf("the subscriber got %d packets in the 2 s after the disk filled", after-before)
	}
	if _, _, err := request(t, h, map[string]any{"request": "list"}, nil); err != nil {
		t.Fatalf("the server does not answer after the disk filled: %v", err)
	}
	<-done
	mustRequest(t, p.h, map[string]any{"request": "unpublish"}, nil)
	re := regexp.MustCompile(`videoroom recording closed.* packets=(\d+) dropped=(\d+) err=.*no space left on device`)
	var found []string
	deadline := time.Now().Add(5 * time.Second)
	for found == nil && time.Now().Before(deadline) {
		found = re.FindStringSubmatch(logs.String())
		time.Sleep(50 * time.Millisecond)
	}
	if found == nil {
		t.Fatalf("no log of the recording's losses:\n%s", logs.String())
	}
	t.Logf("recording on a full disk: %s packets written, %s dropped; subscriber got %d packets in 2 s after", found[1], found[2], after-before)
	if n, _ := strconv.Atoi(found[2]); n == 0 {
		t.Fatal("no packet counted as dropped")
	}
}

package file

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pion/rtp"

	"github.com/strata-rtc/strata/internal/sfu"
)

// capture is a Sink that keeps a copy of every packet and when it arrived.
type capture struct {
	mu   sync.Mutex
	pkts []rtp.Packet
	at   []time.Duration
}

func (c *capture) WriteRTP(p *sfu.Packet) {
	var pkt rtp.Packet
	if err := pkt.Unmarshal(append([]byte(nil), p.Bytes...)); err != nil {
		panic(err)
	}
	c.mu.Lock()
	c.pkts = append(c.pkts, pkt)
	c.at = append(c.at, p.At)
	c.mu.Unlock()
}

func (c *capture) Resync() {}

func (c *capture) packets() ([]rtp.Packet, []time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]rtp.Packet(nil), c.pkts...), append([]time.Duration(nil), c.at...)
}

// openCaptured opens path and adds a capture to every track.
func openCaptured(t *testing.T, path string, opts Options) (*Source, []*capture) {
	t.Helper()
	s, err := Open(path, opts)
	if err != nil {
		t.Fatalf("Open(%s): %v", path, err)
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

// waitDone waits for an ondemand source to end.
func waitDone(t *testing.T, s *Source, limit time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	select {
	case <-s.Done():
	case <-time.After(limit):
		t.Fatalf("the source did not end within %v", limit)
	}
	if err := s.Err(); err != nil {
		t.Fatalf("playback error: %v", err)
	}
	return time.Since(start)
}

// ffmpeg runs Debian's ffmpeg to make a test file in the test's directory.
func ffmpeg(t testing.TB, name string, args ...string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), name)
	cmd := exec.Command("ffmpeg", append(append([]string{"-v", "error", "-y"}, args...), out)...)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("ffmpeg %v: %v\n%s", args, err, b)
	}
	return out
}

// probe returns an ffprobe entry of the first stream of the selected kind ("a" or "v").
func probe(t *testing.T, path, stream, entry string) string {
	t.Helper()
	out, err := exec.Command("ffprobe", "-v", "error", "-select_streams", stream, "-count_packets",
		"-count_frames", "-show_entries", "stream="+entry, "-of", "csv=p=0", path).CombinedOutput()
	if err != nil {
		t.Fatalf("ffprobe %s: %v\n%s", path, err, out)
	}
	return strings.TrimSpace(string(out))
}

func probeInt(t *testing.T, path, stream, entry string) int {
	t.Helper()
	s := probe(t, path, stream, entry)
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatalf("ffprobe %s %s: %q", path, entry, s)
	}
	return n
}

// decodeErrors decodes a file with ffmpeg and returns what it reported.
func decodeErrors(t *testing.T, path string) string {
	t.Helper()
	out, _ := exec.Command("ffmpeg", "-v", "error", "-i", path, "-f", "null", "-").CombinedOutput()
	return strings.TrimSpace(string(out))
}

func writeFile(t testing.TB, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// checkSequence checks that sequence numbers follow each other and returns the timestamp
// deltas between consecutive packets.
func checkSequence(t *testing.T, pkts []rtp.Packet) []uint32 {
	t.Helper()
	var deltas []uint32
	for i := 1; i < len(pkts); i++ {
		if pkts[i].SequenceNumber != pkts[i-1].SequenceNumber+1 {
			t.Fatalf("packet %d: sequence number %d after %d", i, pkts[i].SequenceNumber, pkts[i-1].SequenceNumber)
		}
		deltas = append(deltas, pkts[i].Timestamp-pkts[i-1].Timestamp)
	}
	return deltas
}

func copyFile(t testing.TB, from, name string) string {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	return writeFile(t, name, b)
}

package videoroom_test

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// testLayer describes one simulcast layer of the test clip.
type testLayer struct {
	rid    string
	size   string
	kbps   int
	frames [][]byte
	keyAt  []bool
	byHash map[[32]byte]int // frame hash → frame index
}

// The test clip: 2 s at 30 fps, keyframes every 12 frames, three VP8 temporal layers in the
// pattern 0,2,1,2 (libvpx's own temporal scalability), three resolutions.
var testLayers = []testLayer{
	{rid: "q", size: "160x90", kbps: 100},
	{rid: "h", size: "320x180", kbps: 300},
	{rid: "f", size: "640x360", kbps: 900},
}

const (
	clipGOP     = 12
	clipSeconds = 2
	clipFPS     = 30
	clipPattern = 4 // temporal pattern length
)

// clipTID is the temporal layer of frame i (the encoder's ts_layer_id pattern).
func clipTID(i int) uint8 { return []uint8{0, 2, 1, 2}[i%clipPattern] }

var (
	mediaOnce  sync.Once
	mediaErr   error
	clipLayers []testLayer
)

// testMedia encodes the clip with ffmpeg once per machine (cached under the user cache directory,
// keyed by the encoding parameters) and loads it.
func testMedia(t testing.TB) []testLayer {
	t.Helper()
	mediaOnce.Do(func() { clipLayers, mediaErr = loadTestMedia() })
	if mediaErr != nil {
		t.Fatalf("test media: %v", mediaErr)
	}
	return clipLayers
}

func loadTestMedia() ([]testLayer, error) {
	if _, err := exec.LookPath("ffmpeg"); err != nil {
		return nil, fmt.Errorf("ffmpeg is needed to make the test clip: %w", err)
	}
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	dir := filepath.Join(base, "strata-testmedia")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	out := make([]testLayer, len(testLayers))
	copy(out, testLayers)
	for i := range out {
		l := &out[i]
		name := filepath.Join(dir, fmt.Sprintf("vp8-%s-%dk-g%d-%ds-l3t3.ivf", l.size, l.kbps, clipGOP, clipSeconds))
		if _, err := os.Stat(name); err != nil {
			if err := encode(name, l.size, l.kbps); err != nil {
				return nil, err
			}
		}
		data, err := os.ReadFile(name)
		if err != nil {
			return nil, err
		}
		if l.frames, err = readIVF(data); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		l.byHash = map[[32]byte]int{}
		for n, f := range l.frames {
			l.keyAt = append(l.keyAt, f[0]&1 == 0)
			l.byHash[sha256.Sum256(f)] = n
		}
	}
	return out, nil
}

func encode(name, size string, kbps int) error {
	tmp := name + ".tmp"
	cmd := exec.Command("ffmpeg", "-hide_banner", "-loglevel", "error", "-y",
		"-f", "lavfi", "-i", fmt.Sprintf("testsrc2=size=%s:rate=%d", size, clipFPS), "-t", fmt.Sprint(clipSeconds),
		"-c:v", "libvpx", "-b:v", fmt.Sprintf("%dk", kbps), "-g", fmt.Sprint(clipGOP), "-keyint_min", fmt.Sprint(clipGOP),
		"-deadline", "realtime", "-cpu-used", "8",
		"-ts-parameters", fmt.Sprintf("ts_number_layers=3:ts_target_bitrate=%d,%d,%d:ts_rate_decimator=4,2,1:ts_periodicity=4:ts_layer_id=0,2,1,2",
			kbps/2, kbps*3/4, kbps),
		"-f", "ivf", tmp)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("ffmpeg: %v: %s", err, out)
	}
	return os.Rename(tmp, name)
}

// readIVF splits an IVF file into frames.
func readIVF(b []byte) ([][]byte, error) {
	if len(b) < 32 || string(b[:4]) != "DKIF" {
		return nil, fmt.Errorf("not an IVF file")
	}
	hdr := int(binary.LittleEndian.Uint16(b[6:8]))
	var frames [][]byte
	for i := hdr; i+12 <= len(b); {
		size := int(binary.LittleEndian.Uint32(b[i : i+4]))
		i += 12
		if size <= 0 || i+size > len(b) {
			return nil, fmt.Errorf("truncated frame at %d", i)
		}
		frames = append(frames, b[i:i+size])
		i += size
	}
	if len(frames) == 0 {
		return nil, fmt.Errorf("no frames")
	}
	return frames, nil
}

// vp8Packetizer splits frames into RTP payloads with a full VP8 payload descriptor: a 15-bit
// picture id, TL0PICIDX and TID/Y, as a browser sending temporal layers does.
type vp8Packetizer struct {
	pic uint16
	tl0 uint8
}

const maxPayload = 1100

func (p *vp8Packetizer) payloads(frame []byte, tid uint8, sync bool) [][]byte {
	if tid == 0 {
		p.tl0++
	}
	var out [][]byte
	for off := 0; off < len(frame); off += maxPayload {
		end := min(off+maxPayload, len(frame))
		d0 := byte(0x80)
		if off == 0 {
			d0 |= 0x10
		}
		y := byte(0)
		if sync {
			y = 0x20
		}
		pl := append([]byte{d0, 0xE0, 0x80 | byte(p.pic>>8), byte(p.pic), p.tl0, tid<<6 | y}, frame[off:end]...)
		out = append(out, pl)
	}
	p.pic = (p.pic + 1) & 0x7fff
	return out
}

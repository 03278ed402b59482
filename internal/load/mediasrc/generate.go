// Package mediasrc is the publishers' media: real VP8 (three simulcast resolutions) and Opus
// encoded once with ffmpeg into a cache directory, read back with Pion's IVF and Ogg readers, cut
// into RTP payloads, and sent at real-time pace by a Pacer. Pacing and packetization allocate
// nothing per packet, and the clips are shared read-only by every publisher, so a generator with
// many publishers stays cheap. A publisher asked for a keyframe (PLI/FIR) skips ahead to the
// clip's next keyframe, as an encoder would produce one.
//
// A second kind of clip is one VP8 stream of three temporal layers (LoadTemporal): content with
// scene changes rendered by ffmpeg, encoded with libvpx through internal/vp8enc, each packet's
// payload descriptor carrying the frame's TID, layer-sync flag and TL0PICIDX.
package mediasrc

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
)

// Layer describes one encoded video resolution.
type Layer struct {
	RID           string
	Width, Height int
	Kbps          int
}

// Layers are the simulcast layers, highest first (the order Janus assumes when the offer does
// not say otherwise, and the order of a browser's sendEncodings).
var Layers = []Layer{
	{RID: "f", Width: 1280, Height: 720, Kbps: 1200},
	{RID: "h", Width: 640, Height: 360, Kbps: 400},
	{RID: "q", Width: 320, Height: 180, Kbps: 150},
}

// Clip parameters. The version is part of the file names so a change regenerates the cache.
const (
	clipVersion  = "v1"
	clipSeconds  = 10
	clipFPS      = 30
	gopFrames    = 60 // a keyframe every 2 s, besides those requested
	opusKbps     = 32
	opusFrameDur = 20 // ms per Opus packet, and per Ogg page (one packet a page)
)

// DefaultDir is the cache the clips are generated into when no directory is given: next to Go's
// build cache, so `go clean -cache` users keep it and the repository stays clean.
func DefaultDir() string {
	if d := os.Getenv("STRATA_TESTMEDIA"); d != "" {
		return d
	}
	if d := os.Getenv("GOCACHE"); d != "" && d != "off" {
		return filepath.Join(filepath.Dir(d), "strata-testmedia")
	}
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "strata-testmedia")
	}
	return filepath.Join(os.TempDir(), "strata-testmedia")
}

// VideoFile and AudioFile are the clip paths inside dir.
func VideoFile(dir string, l Layer) string {
	return filepath.Join(dir, fmt.Sprintf("%s-vp8-%dx%d.ivf", clipVersion, l.Width, l.Height))
}

// RateFile is the clip of a layer encoded at its own rate (LoadRates) inside dir: one of Layers
// is its usual file.
func RateFile(dir string, l Layer) string {
	for _, d := range Layers {
		if d.Width == l.Width && d.Height == l.Height && d.Kbps == l.Kbps {
			return VideoFile(dir, l)
		}
	}
	return filepath.Join(dir, fmt.Sprintf("%s-vp8-%dx%d-%dk.ivf", clipVersion, l.Width, l.Height, l.Kbps))
}

// AudioFile is the Opus clip inside dir.
func AudioFile(dir string) string { return filepath.Join(dir, clipVersion+"-opus.ogg") }

// Ensure generates whatever clips are missing in dir with ffmpeg.
func Ensure(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var missing []Layer
	for _, l := range Layers {
		if !exists(VideoFile(dir, l)) {
			missing = append(missing, l)
		}
	}
	if len(missing) > 0 {
		if err := encodeVideo(dir, missing, VideoFile); err != nil {
			return err
		}
	}
	if !exists(AudioFile(dir)) {
		return encodeAudio(dir)
	}
	return nil
}

func exists(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Size() > 0
}

// encodeVideo encodes the moving test pattern once per layer, at constant bitrate so the load is
// predictable, in one ffmpeg run. Files are written under temporary names and renamed, so a
// concurrent generator never reads half a file.
func encodeVideo(dir string, layers []Layer, file func(string, Layer) string) error {
	// -t before -i bounds the input; after it, it would bound only the first output and the
	// others would be encoded forever.
	args := []string{"-hide_banner", "-loglevel", "error", "-y", "-t", strconv.Itoa(clipSeconds), "-f", "lavfi",
		"-i", fmt.Sprintf("testsrc2=size=1280x720:rate=%d", clipFPS)}
	split := fmt.Sprintf("[0:v]split=%d", len(layers))
	for i := range layers {
		split += fmt.Sprintf("[s%d]", i)
	}
	filter := split
	for i, l := range layers {
		filter += fmt.Sprintf(";[s%d]scale=%d:%d[o%d]", i, l.Width, l.Height, i)
	}
	args = append(args, "-filter_complex", filter)
	tmps := make([]string, len(layers))
	for i, l := range layers {
		kbps := strconv.Itoa(l.Kbps) + "k"
		tmps[i] = file(dir, l) + fmt.Sprintf(".%d.tmp", os.Getpid())
		args = append(args, "-map", fmt.Sprintf("[o%d]", i), "-c:v", "libvpx", "-deadline", "realtime",
			"-cpu-used", "8", "-b:v", kbps, "-minrate", kbps, "-maxrate", kbps, "-g", strconv.Itoa(gopFrames),
			"-keyint_min", strconv.Itoa(gopFrames), "-auto-alt-ref", "0", "-f", "ivf", tmps[i])
	}
	if err := ffmpeg(args); err != nil {
		return err
	}
	for i, l := range layers {
		if err := os.Rename(tmps[i], file(dir, l)); err != nil {
			return err
		}
	}
	return nil
}

// encodeAudio encodes a tone at constant bitrate, one 20 ms Opus packet per Ogg page (so each
// page read is one RTP payload).
func encodeAudio(dir string) error {
	tmp := AudioFile(dir) + fmt.Sprintf(".%d.tmp", os.Getpid())
	args := []string{"-hide_banner", "-loglevel", "error", "-y", "-t", strconv.Itoa(clipSeconds), "-f", "lavfi",
		"-i", "sine=frequency=440:sample_rate=48000",
		"-c:a", "libopus", "-b:a", strconv.Itoa(opusKbps) + "k", "-vbr", "off",
		"-frame_duration", strconv.Itoa(opusFrameDur), "-page_duration", strconv.Itoa(opusFrameDur * 1000),
		"-f", "ogg", tmp}
	if err := ffmpeg(args); err != nil {
		return err
	}
	return os.Rename(tmp, AudioFile(dir))
}

func ffmpeg(args []string) error {
	bin, err := exec.LookPath("ffmpeg")
	if err != nil {
		return errors.New("mediasrc: ffmpeg is needed to generate the test media (apt-get install ffmpeg)")
	}
	var stderr bytes.Buffer
	cmd := exec.Command(bin, args...)
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("mediasrc: ffmpeg: %v: %s", err, bytes.TrimSpace(stderr.Bytes()))
	}
	return nil
}

// LoadRates is Load for layers of any resolution and rate (highest first): each is encoded once
// into its own file, named by resolution and rate (RateFile).
func LoadRates(dir string, layers []Layer) (*Media, error) {
	if err := Ensure(dir); err != nil {
		return nil, err
	}
	var missing []Layer
	for _, l := range layers {
		if !exists(RateFile(dir, l)) {
			missing = append(missing, l)
		}
	}
	if len(missing) > 0 {
		if err := encodeVideo(dir, missing, RateFile); err != nil {
			return nil, err
		}
	}
	return readMedia(dir, layers, RateFile)
}

package scenario

import (
	"errors"
	"os"
	"path/filepath"
	"strings"

	"gopkg.in/yaml.v3"
)

// KindBrowser is a flow of headless Chromium sending its camera with
// libwebrtc's own congestion control. Only the emulation engine runs it.
const KindBrowser = "browser"

// Receivers of a browser flow.
const (
	ReceiverBrowser  = "browser"  // a second Chromium in the destination host
	ReceiverEchotest = "echotest" // strata serve's echotest in the destination host
)

// Contents of a browser flow's camera.
const (
	ContentCamera = "camera" // Chromium's synthetic fake camera: easy to encode, so it may not fill the target
	ContentNoise  = "noise"  // generated: a moving gradient under fresh noise; the encoder meets any target
)

// ErrBrowserNeedsEmulation is what the simulator says about a browser flow.
var ErrBrowserNeedsEmulation = errors.New("browser flows run only in emulation: strata lab run --engine emu")

// BrowserVideo is what a browser flow's camera captures and sends.
type BrowserVideo struct {
	Width, Height int
	FPS           float64
	// Content is ContentCamera or ContentNoise (at Width x Height, FPS).
	Content string
	// File is a .y4m played as the camera (realistic content; its own size and
	// frame rate win over Width, Height and FPS), absolute or resolved against
	// the scenario file's directory. Empty: Chromium's synthetic fake camera.
	File string
	// MaxRate caps the video encoder (RTCRtpEncodingParameters.maxBitrate) in
	// bit/s; 0 leaves libwebrtc's own cap for the resolution.
	MaxRate float64
}

// DefaultBrowserVideo is 720p at 30 fps, libwebrtc's usual call size.
func DefaultBrowserVideo() BrowserVideo {
	return BrowserVideo{Width: 1280, Height: 720, FPS: 30, Content: ContentCamera}
}

func (d *decoder) receiver(v *yaml.Node, field string, dst *string) {
	d.Str(v, field, dst)
	switch *dst {
	case ReceiverBrowser, ReceiverEchotest:
	default:
		d.Failf(v, field, "unknown receiver %q (browser or echotest)", *dst)
	}
}

// browserVideo decodes `video: {width, height, fps, content, file, max_rate}`.
func (d *decoder) browserVideo(n *yaml.Node, field string, dst *BrowserVideo) {
	content := false
	d.Mapping(n, field, map[string]fieldFn{
		"content": func(v *yaml.Node, f string) {
			content = true
			d.Str(v, f, &dst.Content)
			if dst.Content != ContentCamera && dst.Content != ContentNoise {
				d.Failf(v, f, "unknown content %q (camera or noise; a y4m goes in file)", dst.Content)
			}
		},
		"width":    func(v *yaml.Node, f string) { d.Integer(v, f, 16, 7680, &dst.Width) },
		"height":   func(v *yaml.Node, f string) { d.Integer(v, f, 16, 4320, &dst.Height) },
		"max_rate": func(v *yaml.Node, f string) { d.Rate(v, f, &dst.MaxRate) },
		"fps": func(v *yaml.Node, f string) {
			d.Number(v, f, &dst.FPS)
			if dst.FPS < 1 || dst.FPS > 60 {
				d.Failf(v, f, "fps must be between 1 and 60")
			}
		},
		"file": func(v *yaml.Node, f string) {
			d.Str(v, f, &dst.File)
			if !strings.HasSuffix(dst.File, ".y4m") {
				d.Failf(v, f, "%q is not a .y4m file (Chromium plays only y4m as a fake camera)", dst.File)
				return
			}
			if !filepath.IsAbs(dst.File) {
				dst.File = filepath.Join(filepath.Dir(d.File), dst.File)
			}
			if st, err := os.Stat(dst.File); err != nil || st.IsDir() {
				d.Failf(v, f, "no such file %s", dst.File)
			}
		},
	})
	if content && dst.File != "" {
		d.Failf(n, field, "give content or file, not both")
	}
}

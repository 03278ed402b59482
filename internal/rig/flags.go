package rig

import (
	"flag"

	"github.com/strata-rtc/strata/internal/load/mediasrc"
)

// Binaries are what a run starts — the two servers — and the test media it sends, as the
// benchmark's and the probes' command lines name them.
type Binaries struct {
	Strata, Janus, JanusLib, MediaDir string
}

// AddFlags registers -strata, -janus, -janus-lib and -media-dir on fs.
func (b *Binaries) AddFlags(fs *flag.FlagSet) {
	fs.StringVar(&b.Strata, "strata", "bin/strata", "strata binary")
	fs.StringVar(&b.Janus, "janus", "janus", "janus binary")
	fs.StringVar(&b.JanusLib, "janus-lib", "/usr/lib/x86_64-linux-gnu/janus", "Janus plugin and transport directory")
	fs.StringVar(&b.MediaDir, "media-dir", mediasrc.DefaultDir(), "cache of the generated test media")
}

package streaming

import (
	"fmt"

	"github.com/strata-rtc/strata/internal/source"
	"github.com/strata-rtc/strata/internal/source/file"
)

// openFile opens a live or ondemand mountpoint's file (raw A-law/µ-law as Janus's samples, Ogg/Opus,
// WebM/Matroska with VP8, VP9 and Opus). A live mountpoint plays it once for every viewer, from
// now; an ondemand one opens it again for each viewer, who hears it from the start when it sends
// start. Both loop at the end, as Janus's do. The streams are the file's tracks, named "a" and "v"
// (then "a1", "v1", ...).
func openFile(p *Plugin, c *Create) (*opened, *Error) {
	path := c.File.Filename
	opts := file.Options{Loop: true, Receiver: p.receiverConfig(), AudioPT: uint8(c.File.PT)}
	src, err := file.Open(path, opts)
	if err != nil {
		return nil, errorf(ErrCantCreate, "Can't add '%s' stream, error opening file (%v)", c.Type, err)
	}
	o := &opened{}
	count := map[source.Kind]int{}
	for _, t := range src.Tracks() {
		mid := string(t.Kind[0])
		if n := count[t.Kind]; n > 0 {
			mid = fmt.Sprintf("%s%d", mid, n)
		}
		count[t.Kind]++
		o.streams = append(o.streams, &mpStream{kind: t.Kind, mid: mid, label: t.Label, codec: t.Codec,
			codecName: t.Codec.String(), pt: int(t.PT), fmtp: t.Fmtp, recv: t.Recv})
	}
	if c.Type == "live" {
		src.Start()
		o.src = src
		return o, nil
	}
	_ = src.Close() // opened to check the file and learn its tracks
	for _, st := range o.streams {
		st.recv = nil
	}
	o.perViewer = func() (source.Source, error) { return file.Open(path, opts) }
	return o, nil
}

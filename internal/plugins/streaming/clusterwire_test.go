package streaming

import (
	"encoding/json"
	"testing"

	"github.com/strata-rtc/strata/internal/media"
)

// FuzzDecodeWireMountpoint: another node's announcement is a mountpoint this node can describe
// and offer (a known codec of the stream's kind, bounded strings and streams) or an error, never
// a panic; what it accepts survives a round trip and builds a remote copy with its streams.
func FuzzDecodeWireMountpoint(f *testing.F) {
	for _, seed := range []string{
		`{"id":5,"kind":"rtp","description":"d","enabled":true,"streams":[{"mid":"a","kind":"audio","codec":"opus","pt":111},{"mid":"v","kind":"video","codec":"vp8","simulcast":true}]}`,
		`{"id":5,"kind":"live","streams":[{"mid":"v","kind":"video","codec":"vp9","svc":true}]}`,
		`{"id":5,"kind":"ondemand","streams":[{"mid":"a","kind":"audio","codec":"opus"}]}`,
		`{"id":5,"kind":"rtp","streams":[{"mid":"a","kind":"audio","codec":"vp8"}]}`,
		`{"id":9007199254740993,"kind":"rtp","streams":[]}`, `[]`, `{`,
	} {
		f.Add([]byte(seed))
	}
	p := &Plugin{}
	f.Fuzz(func(t *testing.T, raw []byte) {
		w, err := decodeWireMountpoint(raw)
		if err != nil {
			return
		}
		again, _ := json.Marshal(w)
		if w2, err := decodeWireMountpoint(again); err != nil || !sameMedia(w, w2) {
			t.Fatalf("accepted %q but not its re-encoding %q: %v", raw, again, err)
		}
		mp := p.remoteMountpoint("n1", w)
		if len(mp.streams) != len(w.Streams) {
			t.Fatalf("%d streams from %d", len(mp.streams), len(w.Streams))
		}
		for _, st := range mp.streams {
			if st.codec == media.CodecUnknown || st.recv != nil {
				t.Fatalf("stream %+v", st)
			}
		}
	})
}

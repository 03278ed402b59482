package relay

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/internal/config"
)

const goodDescriptor = `{"feed":"f1","generation":3,"streams":[
 {"mid":"0","kind":"audio","codec":{"mime":"audio/opus","clock_rate":48000,"channels":2,"fmtp":"minptime=10"},"layers":1,
  "extensions":{"urn:ietf:params:rtp-hdrext:ssrc-audio-level":1}},
 {"mid":"1","kind":"video","codec":{"mime":"video/VP8","clock_rate":90000},"simulcast":true,"layers":3,"rids":["q","h","f"]},
 {"mid":"2","kind":"data"}]}`

func TestDecodeDescriptor(t *testing.T) {
	d, err := DecodeDescriptor([]byte(goodDescriptor))
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Streams) != 3 || d.Streams[2].Kind != dataKind || d.Streams[0].extIDs().AudioLevel != 1 || d.Streams[1].Layers != 3 || d.Streams[1].Codec.Capability().MimeType != "video/VP8" {
		t.Fatalf("%+v", d)
	}
	for _, c := range []struct {
		name, from, to string
		want           error
	}{
		{"not JSON", `{"feed":"f1"`, `{"feed":"f1",`, ErrBadDescriptor},
		{"an unknown codec", `"video/VP8"`, `"video/foo"`, ErrUnknownCodec},
		{"a codec of the other kind", `"audio/opus"`, `"video/VP9"`, ErrBadDescriptor},
		{"a MIME type without its kind", `"video/VP8"`, `"vp8"`, ErrUnknownCodec},
		{"simulcast audio", `"layers":1,`, `"simulcast":true,"layers":2,`, ErrBadDescriptor},
		{"too many layers", `"layers":3`, `"layers":9`, ErrBadDescriptor},
		{"no layers", `"layers":3`, `"layers":0`, ErrBadDescriptor},
		{"RIDs that do not match the layers", `["q","h","f"]`, `["q"]`, ErrBadDescriptor},
		{"a repeated mid", `"mid":"1"`, `"mid":"0"`, ErrBadDescriptor},
		{"a wrong clock rate", `"clock_rate":90000`, `"clock_rate":1`, ErrBadDescriptor},
		{"an extension id not the link's", `-level":1`, `-level":7`, ErrBadDescriptor},
		{"an unknown extension", `urn:ietf:params:rtp-hdrext:ssrc-audio-level`, `urn:x`, ErrBadDescriptor},
		{"no feed id", `"feed":"f1"`, `"feed":""`, ErrBadDescriptor},
		{"a data stream with layers", `"kind":"data"`, `"kind":"data","layers":1`, ErrBadDescriptor},
		{"a data stream with a codec", `"kind":"data"`, `"kind":"data","codec":{"mime":"video/VP8","clock_rate":90000}`, ErrBadDescriptor},
		{"a data stream with extensions", `"kind":"data"`, `"kind":"data","extensions":{"urn:x":1}`, ErrBadDescriptor},
		{"an unknown kind without a codec", `"kind":"data"`, `"kind":"datum"`, ErrUnknownCodec},
		{"a data stream's repeated mid", `{"mid":"2"`, `{"mid":"1"`, ErrBadDescriptor},
	} {
		in := strings.Replace(goodDescriptor, c.from, c.to, 1)
		if in == goodDescriptor {
			t.Fatalf("%s: the replacement did not apply", c.name)
		}
		if _, err := DecodeDescriptor([]byte(in)); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
	if _, err := DecodeDescriptor([]byte(`{"feed":"f","streams":[]}`)); !errors.Is(err, ErrBadDescriptor) {
		t.Errorf("no streams: %v", err)
	}
}

// FuzzDecodeDescriptor: whatever another node sends, decoding returns an error or a descriptor
// that validates and survives a round trip.
func FuzzDecodeDescriptor(f *testing.F) {
	f.Add([]byte(goodDescriptor))
	f.Add([]byte(`{"feed":"x","streams":[{"mid":"a","kind":"video","codec":{"mime":"video/AV1","clock_rate":90000},"layers":1,"extensions":{"https://aomediacodec.github.io/av1-rtp-spec/#dependency-descriptor-rtp-header-extension":2}}]}`))
	f.Add([]byte(`{"feed":"d","streams":[{"mid":"0","kind":"data"}]}`))
	f.Add([]byte(`{"streams":null}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := DecodeDescriptor(b)
		if err != nil {
			return
		}
		if err := d.Validate(); err != nil {
			t.Fatalf("a decoded descriptor does not validate: %v", err)
		}
		for _, s := range d.Streams {
			if s.Kind == dataKind {
				if s.Codec != (CodecDescriptor{}) || s.Layers != 0 || len(s.Extensions) != 0 {
					t.Fatalf("data stream %+v", s)
				}
				continue
			}
			if codecOf(s.Codec.MimeType).String() == "" || s.Layers < 1 {
				t.Fatalf("stream %+v", s)
			}
		}
		again, err := json.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := DecodeDescriptor(again); err != nil {
			t.Fatalf("re-encoded descriptor refused: %v", err)
		}
	})
}

func TestConfigFrom(t *testing.T) {
	c, err := ConfigFrom(config.ClusterRelay{Address: "10.0.0.2", Ports: "7092", Transport: "srtp"}, "n1", nil)
	if err != nil || c.NodeID != "n1" || c.Address != "10.0.0.2" || c.PortMin != 7092 || c.PortMax != 7092 {
		t.Fatalf("%+v %v", c, err)
	}
	if _, err := ConfigFrom(config.ClusterRelay{Ports: "a-b"}, "n1", nil); err == nil {
		t.Fatal("bad ports taken")
	}
}

// FuzzSubscribeRequest: an edge's subscribe request is either refused or names one SSRC of the
// edge's half per layer, none twice, and data channels of the edge's half for data streams only.
func FuzzSubscribeRequest(f *testing.F) {
	f.Add([]byte(`{"feed":"f1","generation":3,"ssrcs":[[2147483649],[2147483650,2147483651,2147483652],null],"channels":{"2":17}}`))
	f.Add([]byte(`{"ssrcs":[[2147483649],[2147483650,2147483651,2147483652],[]],"channels":{"1":17,"2":16}}`))
	f.Add([]byte(`{"ssrcs":[[1],[2,3,4]]}`))
	f.Add([]byte(`{"ssrcs":[[0]]}`))
	desc, err := DecodeDescriptor([]byte(goodDescriptor))
	if err != nil {
		f.Fatal(err)
	}
	r := &Relay{cfg: Config{NodeID: "a"}, exports: map[string]*export{}}
	l := &link{peer: "b", pc: &webrtc.PeerConnection{}} // an SCTP link (never used: only checked)
	e := &export{desc: desc, outs: map[*link]*feedOut{}}
	f.Fuzz(func(t *testing.T, b []byte) {
		var req subscribeRequest
		if decode(pathSubscribe, b, &req) != nil {
			return
		}
		if r.checkSSRCs(l, e, req.SSRCs) != nil || r.checkDataChannels(l, e, req.Channels) != nil {
			return
		}
		ids := map[uint16]bool{}
		for mid, id := range req.Channels {
			if mid != "2" || ids[id] || !ownsDataChannel("b", "a", id) {
				t.Fatalf("data channel %d for %q taken", id, mid)
			}
			ids[id] = true
		}
		seen := map[uint32]bool{}
		for i, list := range req.SSRCs {
			if len(list) != desc.Streams[i].Layers {
				t.Fatalf("stream %d: %d SSRCs taken for %d layers", i, len(list), desc.Streams[i].Layers)
			}
			for _, s := range list {
				if seen[s] || !ownsSSRC("b", "a", s) {
					t.Fatalf("SSRC %d taken", s)
				}
				seen[s] = true
			}
		}
	})
}

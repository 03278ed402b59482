package streaming

import (
	"encoding/json"
	"reflect"
	"testing"
)

// failure is what Janus 1.1.2 answers a bad request with (error_code and error).
type failure struct {
	code   int
	reason string
}

func (f failure) is(err *Error) bool {
	return err != nil && err.Code == f.code && err.Reason == f.reason
}

// TestParseErrors: each malformed request gets Janus's code and, word for word, Janus's reason. The
// table follows Janus's parameter tables, so where a request has several faults the first in
// Janus's order is the one reported.
func TestParseErrors(t *testing.T) {
	cases := []struct {
		body string
		want failure
	}{
		// The envelope.
		{``, failure{450, "No message??"}},
		{`null`, failure{450, "No message??"}},
		{`[1]`, failure{451, "JSON error: not an object"}},
		{`{}`, failure{453, "Missing mandatory element (request)"}},
		{`{"request":7}`, failure{454, "Invalid element type (request should be a string)"}},
		{`{"request":"dance"}`, failure{452, "Unknown request 'dance'"}},
		{`{"request":"Dance"}`, failure{452, "Unknown request 'Dance'"}},
		{`{"request":"kick","id":1}`, failure{453, "Missing mandatory element (viewer)"}},
		{`{"request":"kick","id":1,"viewer":"x"}`, failure{454, "Invalid element type (viewer should be a positive integer)"}},
		// Ids.
		{`{"request":"info"}`, failure{453, "Missing mandatory element (id)"}},
		{`{"request":"info","id":"1"}`, failure{454, "Invalid element type (id should be a positive integer)"}},
		{`{"request":"info","id":-1}`, failure{454, "Invalid element type (id should be a positive integer)"}},
		{`{"request":"INFO","id":1.5}`, failure{454, "Invalid element type (id should be a positive integer)"}},
		{`{"request":"kick_all"}`, failure{453, "Missing mandatory element (id)"}},
		{`{"request":"enable","id":null}`, failure{454, "Invalid element type (id should be a positive integer)"}},
		{`{"request":"disable"}`, failure{453, "Missing mandatory element (id)"}},
		{`{"request":"switch","id":"x"}`, failure{454, "Invalid element type (id should be a positive integer)"}},
		// destroy and edit: their tables before the id.
		{`{"request":"destroy","permanent":"yes"}`, failure{454, "Invalid element type (permanent should be a boolean)"}},
		{`{"request":"destroy"}`, failure{453, "Missing mandatory element (id)"}},
		{`{"request":"edit","new_pin":1}`, failure{454, "Invalid element type (new_pin should be a string)"}},
		{`{"request":"edit","new_is_private":"no","id":"x"}`, failure{454, "Invalid element type (new_is_private should be a boolean)"}},
		{`{"request":"edit","edited_event":true}`, failure{453, "Missing mandatory element (id)"}},
		// recording: the action, its value, then the id.
		{`{"request":"recording","id":1}`, failure{453, "Missing mandatory element (action)"}},
		{`{"request":"recording","action":"pause"}`, failure{454, "Invalid action (should be start|stop)"}},
		{`{"request":"recording","action":"START"}`, failure{453, "Missing mandatory element (id)"}},
		// create: its table, the id, then (CheckSource) the source's.
		{`{"request":"create"}`, failure{453, "Missing mandatory element (type)"}},
		{`{"request":"create","name":1,"type":"rtp"}`, failure{454, "Invalid element type (name should be a string)"}},
		{`{"request":"create","type":"rtp","media":{}}`, failure{454, "Invalid element type (media should be an array)"}},
		{`{"request":"create","type":"rtp","audio":1}`, failure{454, "Invalid element type (audio should be a boolean)"}},
		{`{"request":"create","type":"rtp","id":"7"}`, failure{454, "Invalid element type (id should be a positive integer)"}},
		// watch: its table, the id, the mids.
		{`{"request":"watch","pin":1}`, failure{454, "Invalid element type (pin should be a string)"}},
		{`{"request":"watch","restart":1,"id":1}`, failure{454, "Invalid element type (restart should be a boolean)"}},
		{`{"request":"watch","offer_video":"no","id":1}`, failure{454, "Invalid element type (offer_video should be a boolean)"}},
		{`{"request":"watch","media":["v"]}`, failure{453, "Missing mandatory element (id)"}},
		{`{"request":"watch","id":1,"media":["a",1]}`, failure{454, "The media array must only contain strings (mid values)"}},
		// configure.
		{`{"request":"configure","mid":0}`, failure{454, "Invalid element type (mid should be a string)"}},
		{`{"request":"configure","send":"true"}`, failure{454, "Invalid element type (send should be a boolean)"}},
		{`{"request":"configure","substream":-1}`, failure{454, "Invalid element type (substream should be a positive integer)"}},
		{`{"request":"configure","spatial_layer":1.0}`, failure{454, "Invalid element type (spatial_layer should be a positive integer)"}},
		{`{"request":"configure","min_delay":"0"}`, failure{454, "Invalid element type (min_delay should be an integer)"}},
		{`{"request":"configure","audio":true}`, failure{454, "Invalid element type (audio should be a string)"}},
	}
	for _, c := range cases {
		_, err := Parse(json.RawMessage(c.body))
		if !c.want.is(err) {
			t.Errorf("Parse(%s) = %v, want %d %q", c.body, err, c.want.code, c.want.reason)
		}
	}
}

// TestCreateSourceErrors: the source's elements are Janus's per-type tables and checks, reported by
// CheckSource after the create table, the id and admin_key have passed.
func TestCreateSourceErrors(t *testing.T) {
	const rtp = `{"request":"create","type":"rtp",`
	cases := []struct {
		body string
		want failure
	}{
		{`{"request":"create","type":"webm"}`, failure{454, "Unknown stream type 'webm'...\n"}},
		{rtp + `"srtpsuite":"80"}`, failure{454, "Invalid element type (srtpsuite should be a positive integer)"}},
		{rtp + `"srtpsuite":64,"media":[]}`, failure{456, "Can't add 'rtp' stream, invalid SRTP suite..."}},
		{rtp + `"media":[]}`, failure{456, "Can't add 'rtp' stream, no audio or video have to be streamed..."}},
		{rtp + `"media":[7]}`, failure{453, "Missing mandatory element (type)"}},
		{rtp + `"media":[{"type":"audio","port":5002}]}`, failure{453, "Missing mandatory element (mid)"}},
		{rtp + `"media":[{"type":"audio","mid":"a"}]}`, failure{453, "Missing mandatory element (port)"}},
		{rtp + `"media":[{"type":"audio","mid":"a","port":-5}]}`, failure{454, "Invalid element type (port should be a positive integer)"}},
		{rtp + `"media":[{"type":"video","mid":"v","port":5004,"simulcast":1}]}`, failure{454, "Invalid element type (simulcast should be a boolean)"}},
		{rtp + `"media":[{"type":"audio","mid":"a","port":5002},{"type":"text","mid":"t","port":5006}]}`, failure{456, "Unsupported media type in media stream"}},
		{rtp + `"datatype":"json","media":[{"type":"data","mid":"d","port":5008}]}`, failure{454, "Invalid element (datatype can only be text or binary)"}},
		{rtp + `"audio":false}`, failure{456, "Can't add 'rtp' stream, no audio or video have to be streamed..."}},
		{rtp + `"audio":true,"audioport":5002}`, failure{453, "Missing mandatory element (audiopt)"}},
		{rtp + `"video":true,"videoport":5004,"videopt":100,"videoport2":"x"}`, failure{454, "Invalid element type (videoport2 should be a positive integer)"}},
		{rtp + `"data":true}`, failure{453, "Missing mandatory element (dataport)"}},
		{`{"request":"create","type":"live"}`, failure{453, "Missing mandatory element (filename)"}},
		{`{"request":"create","type":"live","filename":"a.alaw","audiopt":"8"}`, failure{454, "Invalid element type (audiopt should be a positive integer)"}},
		{`{"request":"create","type":"live","filename":"a.alaw"}`, failure{456, "Can't add 'live' stream, we only support audio file streaming right now..."}},
		{`{"request":"create","type":"ondemand","filename":"a.alaw","audio":true,"video":true}`, failure{456, "Can't add 'ondemand' stream, we only support audio file streaming right now..."}},
		{`{"request":"create","type":"rtsp","url":5}`, failure{454, "Invalid element type (url should be a string)"}},
		{`{"request":"create","type":"rtsp","url":"rtsp://cam/1"}`, failure{456, "Can't add 'rtsp' stream, no audio or video have to be streamed..."}},
	}
	for _, c := range cases {
		req, err := Parse(json.RawMessage(c.body))
		if err != nil {
			t.Errorf("Parse(%s): %v, want it to parse", c.body, err)
			continue
		}
		if got := req.(*Create).CheckSource(); !c.want.is(got) {
			t.Errorf("CheckSource(%s) = %v, want %d %q", c.body, got, c.want.code, c.want.reason)
		}
	}
}

// TestCreateRTP: Janus's multistream form and its deprecated one give the same streams.
func TestCreateRTP(t *testing.T) {
	req, err := Parse(json.RawMessage(`{"request":"create","type":"RTP","id":99,"name":"cam","secret":"s",
		"permanent":false,"datatype":"binary","buffermsg":true,"media":[
		{"type":"audio","mid":"a","port":5002,"pt":111,"rtpmap":"OPUS/48000/2","rtcpport":5003},
		{"type":"Video","mid":"v","port":5004,"pt":100,"codec":"vp8","simulcast":true,"port2":5005,"port3":5006,"bufferkf":true},
		{"type":"data","mid":"d","port":5008}]}`))
	if err != nil {
		t.Fatal(err)
	}
	c := req.(*Create)
	if c.ID != 99 || c.Type != "rtp" || *c.MountName != "cam" || *c.Secret != "s" || c.CheckSource() != nil || c.RTP == nil {
		t.Fatalf("create = %+v", c)
	}
	want := []Media{
		{Type: "audio", MID: "a", Port: 5002, PT: 111, Codec: "opus", RTCPPort: 5003, hasRTCP: true},
		{Type: "video", MID: "v", Port: 5004, PT: 100, Codec: "vp8", Simulcast: true, Port2: 5005, Port3: 5006, BufferKF: true},
		{Type: "data", MID: "d", Port: 5008, BufferMsg: true},
	}
	if !reflect.DeepEqual(c.RTP.Media, want) {
		t.Fatalf("media\n got %+v\nwant %+v", c.RTP.Media, want)
	}
	req, err = Parse(json.RawMessage(`{"request":"create","type":"rtp","audio":true,"audioport":5002,"audiopt":111,
		"audiocodec":"opus","video":true,"videoport":5004,"videopt":100,"videocodec":"vp8","videosvc":true}`))
	if err != nil {
		t.Fatal(err)
	}
	want = []Media{
		{Type: "audio", MID: "a", Label: "audio", Port: 5002, PT: 111, Codec: "opus"},
		{Type: "video", MID: "v", Label: "video", Port: 5004, PT: 100, Codec: "vp8", SVC: true},
	}
	if got := req.(*Create).RTP.Media; !reflect.DeepEqual(got, want) {
		t.Fatalf("legacy media\n got %+v\nwant %+v", got, want)
	}
}

// TestParseRequests: well-formed requests give the typed values, names in lower case.
func TestParseRequests(t *testing.T) {
	cases := []struct {
		body string
		want Request
	}{
		{`{"request":"LIST","admin_key":"k"}`, &List{AdminKey: ptr("k")}},
		{`{"request":"list","admin_key":5}`, &List{}},
		{`{"request":"info","id":1,"secret":"s"}`, &Info{ID: 1, Secret: Secret{Key: "secret", Present: true, Value: "s"}}},
		{`{"request":"destroy","id":2,"permanent":true}`, &Destroy{ID: 2, Permanent: true, Secret: Secret{Key: "secret"}}},
		{`{"request":"edit","id":3,"new_pin":"","new_is_private":true}`, &Edit{ID: 3, NewPIN: ptr(""), NewIsPrivate: ptr(true), Secret: Secret{Key: "secret"}}},
		{`{"request":"enable","id":4}`, &Toggle{Op: "enable", ID: 4, Secret: Secret{Key: "secret"}}},
		{`{"request":"disable","id":4,"stop_recording":true}`, &Toggle{Op: "disable", ID: 4, StopRecording: true, Secret: Secret{Key: "secret"}}},
		{`{"request":"recording","action":"Start","id":5,"media":[{"mid":"a","filename":"/tmp/a"},{"mid":"v"},3]}`,
			&Recording{Action: "start", ID: 5, Media: []RecordMedia{{MID: "a", Filename: "/tmp/a"}}, Secret: Secret{Key: "secret"}}},
		{`{"request":"recording","action":"stop","id":5,"media":[{"mid":"a"}],"video":true}`,
			&Recording{Action: "stop", ID: 5, Media: []RecordMedia{{MID: "a"}}, StopVideo: true, Secret: Secret{Key: "secret"}}},
		{`{"request":"kick_all","id":6}`, &KickAll{ID: 6, Secret: Secret{Key: "secret"}}},
		{`{"request":"watch","id":1,"media":["v"],"substream":0}`, &Watch{ID: 1, Media: []string{"v"}, Substream: ptr(0), PIN: Secret{Key: "pin"}}},
		{`{"request":"configure","mid":"v","send":false,"temporal":1,"min_delay":-1}`,
			&Configure{MID: ptr("v"), Send: ptr(false), Temporal: ptr(1), MinDelay: ptr(-1)}},
		{`{"request":"switch","id":2}`, &Switch{ID: 2}},
		{`{"request":"Start"}`, &Start{}},
		{`{"request":"pause"}`, &Pause{}},
		{`{"request":"stop"}`, &Stop{}},
	}
	for _, c := range cases {
		got, err := Parse(json.RawMessage(c.body))
		if err != nil {
			t.Errorf("Parse(%s): %v", c.body, err)
			continue
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("Parse(%s)\n got %+v\nwant %+v", c.body, got, c.want)
		}
		if got.Name() != c.want.Name() || Asynchronous(got.Name()) != isViewer(got) {
			t.Errorf("Parse(%s): name %q, async %v", c.body, got.Name(), Asynchronous(got.Name()))
		}
	}
}

func isViewer(r Request) bool {
	switch r.(type) {
	case *Watch, *Configure, *Switch, *Start, *Pause, *Stop:
		return true
	}
	return false
}

func ptr[T any](v T) *T { return &v }

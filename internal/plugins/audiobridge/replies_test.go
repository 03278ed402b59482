package audiobridge

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// replyType picks the type of replies.go that models a captured plugindata, by its tag and members.
func replyType(d map[string]json.RawMessage) any {
	var tag string
	_ = json.Unmarshal(d["audiobridge"], &tag)
	has := func(k string) bool { _, ok := d[k]; return ok }
	switch {
	case has("error_code"):
		return nil // plugin.RequestError.Data, tested in TestParseErrors
	case tag == "joined" && has("id"), tag == "roomchanged":
		return &Joined{}
	case has("participants"):
		return &Participants{}
	case tag == "left", tag == "talking", tag == "stopped-talking":
		return &IDEvent{}
	case has("result"):
		return &Result{}
	case tag == "event":
		return &RoomEvent{}
	case has("exists"):
		return &ExistsReply{}
	case has("list"):
		return &ListReply{}
	case has("allowed"):
		return &AllowedReply{}
	case has("record"), has("mjrs"):
		return &RecordingReply{}
	case has("file_id"):
		return &FileReply{}
	case has("rtp_forwarders"):
		return &ForwardersReply{}
	case has("stream_id"):
		return &ForwardReply{}
	case has("room"):
		return &RoomReply{}
	}
	return &Tag{}
}

// TestRepliesMatchJanusCaptures: every reply and event Janus 1.1.2 sent in the captures decodes into
// its type with no member left over, and encodes back to the same JSON, so the plugin's replies
// built from these types have Janus's shapes (members present, absent, and their types).
func TestRepliesMatchJanusCaptures(t *testing.T) {
	files, _ := filepath.Glob("testdata/janus-1.1.2/session*.jsonl")
	checked := map[string]int{}
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var step struct {
				Step  string
				Reply struct {
					PluginData struct{ Data json.RawMessage }
				}
				Events []struct {
					PluginData struct{ Data json.RawMessage }
				}
			}
			if err := json.Unmarshal(sc.Bytes(), &step); err != nil {
				t.Fatal(err)
			}
			datas := []json.RawMessage{step.Reply.PluginData.Data}
			for _, e := range step.Events {
				datas = append(datas, e.PluginData.Data)
			}
			for _, raw := range datas {
				if len(raw) == 0 {
					continue
				}
				var d map[string]json.RawMessage
				if err := json.Unmarshal(raw, &d); err != nil {
					t.Fatal(err)
				}
				v := replyType(d)
				if v == nil {
					continue
				}
				dec := json.NewDecoder(bytes.NewReader(raw))
				dec.DisallowUnknownFields()
				if err := dec.Decode(v); err != nil {
					t.Errorf("%s: %s does not decode into %T: %v", step.Step, raw, v, err)
					continue
				}
				out, _ := json.Marshal(v)
				var want, got any
				_ = json.Unmarshal(raw, &want)
				_ = json.Unmarshal(out, &got)
				if !reflect.DeepEqual(got, want) {
					t.Errorf("%s: %T\n got %s\nwant %s", step.Step, v, out, raw)
				}
				checked[reflect.TypeOf(v).Elem().Name()]++
			}
		}
		f.Close()
	}
	if len(checked) < 12 {
		t.Errorf("only %d reply types met in the captures: %v", len(checked), checked)
	}
	t.Logf("compared: %v", checked)
}

package audiobridge

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// captured is one step of testdata/janus-1.1.2/session*.jsonl: a request sent to Janus 1.1.2, its
// synchronous reply, and the events that followed.
type captured struct {
	Step    string          `json:"step"`
	Handle  string          `json:"handle"`
	Request json.RawMessage `json:"request"`
	Reply   struct {
		Janus      string `json:"janus"`
		PluginData struct {
			Data map[string]any `json:"data"`
		} `json:"plugindata"`
	} `json:"reply"`
	Events []struct {
		SenderName string `json:"sender_name"`
		PluginData struct {
			Data map[string]any `json:"data"`
		} `json:"plugindata"`
	} `json:"events"`
}

// outcome is Janus's error for the step (0 if it succeeded): in the reply, or for an acked request
// in the event sent to the requester.
func (c *captured) outcome() (int, string) {
	data := c.Reply.PluginData.Data
	if c.Reply.Janus == "ack" {
		data = nil
		for _, e := range c.Events {
			if e.SenderName == c.Handle {
				data = e.PluginData.Data
				break
			}
		}
	}
	code, _ := data["error_code"].(float64)
	reason, _ := data["error"].(string)
	return int(code), reason
}

// stateful are Janus's errors in the captures that depend on a room's settings, which the parser
// cannot know; the plugin reports them (CheckSecret, groups).
var stateful = map[string]bool{
	"Missing mandatory element (pin)":    true,
	"Missing mandatory element (secret)": true,
	"Missing mandatory element (group)":  true,
}

// TestAgreesWithJanusCaptures: for every request captured from Janus 1.1.2, where Janus refused it
// for its shape (482, 483, 484) strata's parser (and, for join's values, NewParticipant) refuses it
// with the same code and words; where Janus accepted it, so does the parser. The one deliberate
// difference is join's rtp object, which Janus 1.1 does not check.
func TestAgreesWithJanusCaptures(t *testing.T) {
	files, _ := filepath.Glob("testdata/janus-1.1.2/session*.jsonl")
	if len(files) == 0 {
		t.Fatal("no captures")
	}
	checked := 0
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var c captured
			if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			code, reason := c.outcome()
			if stateful[reason] || c.Step == "join rtp bad port type (1.1 checks the top level)" {
				continue
			}
			req, perr := Parse(c.Request)
			if perr == nil {
				if j, ok := req.(*Join); ok {
					room := DefaultRoomOptions()
					_, perr = j.NewParticipant(&room)
				}
			}
			shape := code == ErrInvalidReq || code == ErrMissing || code == ErrInvalid
			switch {
			case shape && perr == nil:
				t.Errorf("%s: Janus refused %s with %d %q, strata accepts it", c.Step, c.Request, code, reason)
			case shape && (perr.Code != code || perr.Reason != reason):
				t.Errorf("%s: Janus %d %q, strata %d %q", c.Step, code, reason, perr.Code, perr.Reason)
			case !shape && perr != nil:
				t.Errorf("%s: Janus answered %s (error %d), strata refuses it: %v", c.Step, c.Request, code, perr)
			}
			checked++
		}
		f.Close()
	}
	t.Logf("%d captured requests compared", checked)
}

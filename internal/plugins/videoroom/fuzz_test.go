package videoroom

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"testing"

	"github.com/strata-rtc/strata/internal/config"
	"github.com/strata-rtc/strata/internal/peer"
	"github.com/strata-rtc/strata/internal/plugin"
	"github.com/strata-rtc/strata/internal/record"
)

// nullHandle is a handle with no PeerConnection: requests that need media fail cleanly.
type nullHandle struct{ events int }

func (h *nullHandle) ID() uint64           { return 1 }
func (h *nullHandle) SessionID() uint64    { return 1 }
func (h *nullHandle) OpaqueID() string     { return "" }
func (h *nullHandle) Logger() *slog.Logger { return slog.New(slog.DiscardHandler) }
func (h *nullHandle) ClosePeer(string)     {}
func (h *nullHandle) Peer(...peer.PeerOption) (*peer.Peer, error) {
	return nil, errors.New("no media in this test")
}
func (h *nullHandle) PushEvent(_ string, data any, _ *plugin.JSEP) error {
	if _, err := json.Marshal(data); err != nil {
		return err
	}
	h.events++
	return nil
}

// FuzzRequests sends arbitrary message bodies (and the synchronous ones through the admin API):
// every request gets an answer or an error event, nothing panics.
func FuzzRequests(f *testing.F) {
	for _, seed := range []string{
		`{"request":"create","room":9,"publishers":2}`, `{"request":"list"}`, `{"request":"exists","room":1234}`,
		`{"request":"join","ptype":"publisher","room":1234,"display":"x"}`,
		`{"request":"join","ptype":"subscriber","room":1234,"streams":[{"feed":1,"mid":"0"}]}`,
		`{"request":"configure","bitrate":1,"streams":[{"mid":"0","send":false}]}`,
		`{"request":"rtp_forward","room":1234,"secret":"adminpwd","publisher_id":1,"streams":[{"mid":"0","port":1}]}`,
		`{"request":"allowed","room":1234,"secret":"adminpwd","action":"add","allowed":["a"]}`,
		`{"request":"edit","room":1234,"secret":"adminpwd","new_publishers":3}`, `{"request":"leave"}`, `null`, `[]`, `{`,
	} {
		f.Add([]byte(seed), []byte(`{"request":"listparticipants","room":1234}`))
	}
	f.Fuzz(func(t *testing.T, msg, admin []byte) {
		p := New(config.Default().Plugins.VideoRoom, record.SessionOptions{}, nil)
		h := &nullHandle{}
		s := newSession(p, h) // no work goroutine: the test runs queued requests itself
		p.sessions.Add(s)
		close(s.done)
		for _, body := range [][]byte{msg, admin, msg} {
			res := s.HandleMessage(context.Background(), plugin.Message{Transaction: "t", Body: body})
			if res.Async {
				// Run it here rather than on the session goroutine, to see it complete.
				s.process(<-s.queue)
			} else if _, err := json.Marshal(res.Data); err != nil {
				t.Fatalf("reply does not marshal: %v", err)
			}
		}
		_ = p.AdminMessage(context.Background(), admin)
		p.Destroy()
	})
}

func TestUnknownRequestIsSynchronous423(t *testing.T) {
	p := New(config.Default().Plugins.VideoRoom, record.SessionOptions{}, nil)
	sp, _ := p.Attach(&nullHandle{})
	defer sp.Detach()
	res := sp.HandleMessage(context.Background(), plugin.Message{Body: json.RawMessage(`{"request":"bogus"}`)})
	d, _ := res.Data.(map[string]any)
	if res.Async || d["error_code"] != ErrInvalidRequest || d["error"] != "Unknown request 'bogus'" || d["videoroom"] != "event" {
		t.Fatalf("reply %+v", res)
	}
}

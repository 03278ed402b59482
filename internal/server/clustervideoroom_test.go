package server

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/cluster/redistest"
	"github.com/strata-rtc/strata/internal/janusclient"
	"github.com/strata-rtc/strata/internal/plugins/videoroom"
)

// TestClusterVideoRoomWiring: with cluster.enabled the videoroom's rooms span the servers (a
// participant joined on one is listed on the other) and each server has its media relay.
func TestClusterVideoRoomWiring(t *testing.T) {
	redis := redistest.Start(t)
	s1 := startServer(t, clusterConfig(t, redis.Addr(), "n1"))
	s2 := startServer(t, clusterConfig(t, redis.Addr(), "n2"))
	if s1.relay == nil || s2.relay == nil {
		t.Fatal("a clustered server without its media relay")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	handle := func(s *Server) *janusclient.Handle {
		c, err := janusclient.Dial(ctx, "ws://"+s.WSAddr())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		sess, err := c.Create(ctx)
		if err != nil {
			t.Fatal(err)
		}
		h, err := sess.Attach(ctx, videoroom.Package)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	ev, err := handle(s1).Message(ctx, map[string]any{"request": "join", "ptype": "publisher", "room": 1234, "display": "on n1"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var joined map[string]any
	if err := json.Unmarshal(ev.PluginData.Data, &joined); err != nil || joined["videoroom"] != "joined" {
		t.Fatalf("join on n1: %s %v", ev.PluginData.Data, err)
	}
	h2 := handle(s2)
	for {
		ev, err := h2.Message(ctx, map[string]any{"request": "listparticipants", "room": 1234}, nil)
		if err != nil {
			t.Fatal(err)
		}
		var list struct {
			Participants []struct {
				ID      float64 `json:"id"`
				Display string  `json:"display"`
			} `json:"participants"`
		}
		if err := json.Unmarshal(ev.PluginData.Data, &list); err != nil {
			t.Fatal(err)
		}
		if len(list.Participants) == 1 && list.Participants[0].ID == joined["id"] && list.Participants[0].Display == "on n1" {
			return
		}
		if ctx.Err() != nil {
			t.Fatalf("n2 lists %+v, not n1's participant %v", list.Participants, joined["id"])
		}
		time.Sleep(50 * time.Millisecond)
	}
}

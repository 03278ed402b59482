package videoroom_test

import (
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/janusclient"
)

// TestSubscriberControls: caps through configure move the layer, pause and start stop and resume
// the media, unsubscribe renegotiates, and a departing publisher is announced.
func TestSubscriberControls(t *testing.T) {
	if testing.Short() {
		t.Skip("real-time media test")
	}
	c := startServer(t, nil)
	admin := attach(t, c)
	const room = 77
	mustRequest(t, admin, map[string]any{"request": "create", "room": room}, nil)
	pub := startPublisher(t, c, room, "cam")
	waitActive(t, admin, room, pub.id)
	sub := subscribe(t, c, room, pub.id, nil)
	if d := sub.waitFrame(time.Now().Add(-time.Minute), 10*time.Second, func(l int) bool { return l == 2 }); d < 0 {
		t.Fatalf("no top layer (now %d)", sub.layerNow())
	}
	mid := sub.pc.GetTransceivers()[0].Mid()
	// A cap of substream 0: strata forwards the base layer and says so.
	mark := time.Now()
	data, _ := mustRequest(t, sub.h, map[string]any{"request": "configure", "streams": []map[string]any{{"mid": mid, "substream": 0}}}, nil)
	if data["configured"] != "ok" {
		t.Fatalf("configure: %v", data)
	}
	if d := sub.waitFrame(mark, 3*time.Second, func(l int) bool { return l == 0 }); d < 0 {
		t.Fatalf("substream 0 cap not applied (layer %d)", sub.layerNow())
	}
	ev := sub.waitEvent(func(d map[string]any) bool { return d["substream"] == 0.0 })
	if ev["mid"] != mid {
		t.Fatalf("layer event %v", ev)
	}
	mark = time.Now()
	mustRequest(t, sub.h, map[string]any{"request": "configure", "streams": []map[string]any{{"mid": mid, "substream": 2, "temporal": 2}}}, nil)
	if d := sub.waitFrame(mark, 5*time.Second, func(l int) bool { return l == 2 }); d < 0 {
		t.Fatalf("cap lifted but no top layer (layer %d)", sub.layerNow())
	}
	// Pause stops the media, start resumes it, without a sequence gap.
	mustRequest(t, sub.h, map[string]any{"request": "pause"}, nil)
	time.Sleep(300 * time.Millisecond)
	before := sub.count()
	time.Sleep(700 * time.Millisecond)
	if n := sub.count() - before; n > 0 {
		t.Fatalf("%d packets while paused", n)
	}
	mustRequest(t, sub.h, map[string]any{"request": "start"}, nil)
	time.Sleep(time.Second)
	if sub.count() == before {
		t.Fatal("no packets after start")
	}
	if missing, bad, _, unverifiable := sub.continuity(time.Time{}); missing != 0 || bad != 0 || unverifiable != 0 {
		t.Fatalf("after pause/start: %d missing, %d bad switches", missing, bad+unverifiable)
	}
	// Unsubscribing from the feed renegotiates with no streams left.
	data, first := mustRequest(t, sub.h, map[string]any{"request": "unsubscribe", "streams": []map[string]any{{"feed": pub.id}}}, nil)
	if data["videoroom"] != "updated" || first == nil {
		t.Fatalf("unsubscribe: %v", data)
	}
	if streams, _ := data["streams"].([]any); len(streams) != 0 {
		t.Fatalf("streams left after unsubscribe: %v", streams)
	}
	// While that offer is unanswered another change is queued ("updating") and offered after the
	// answer.
	data, offer := mustRequest(t, sub.h, map[string]any{"request": "subscribe", "streams": []map[string]any{{"feed": pub.id}}}, nil)
	if data["videoroom"] != "updating" || offer != nil {
		t.Fatalf("subscribe with an offer in flight: %v", data)
	}
	sub.answer(first)
	ev = sub.waitEvent(func(d map[string]any) bool {
		s, _ := d["streams"].([]any)
		return d["videoroom"] == "updated" && len(s) == 1
	})
	sub.answer(ev["_jsep"].(*janusclient.JSEP))
	// The publisher's departure removes the stream with an updated offer.
	mark = time.Now()
	mustRequest(t, pub.h, map[string]any{"request": "unpublish"}, nil)
	ev = sub.waitEvent(func(d map[string]any) bool { return d["_at"].(time.Time).After(mark) && d["videoroom"] == "updated" })
	if streams, _ := ev["streams"].([]any); len(streams) != 0 {
		t.Fatalf("updated after the publisher left: %v", ev)
	}
}

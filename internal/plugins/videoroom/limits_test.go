package videoroom_test

import (
	"strings"
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/config"
	"github.com/strata-rtc/strata/internal/plugins/videoroom"
)

// wantLimit checks a refusal: the code, and an error text that names the option.
func wantLimit(t *testing.T, err error, code int, option string) {
	t.Helper()
	wantCode(t, err, code)
	if !strings.Contains(err.Error(), option) {
		t.Errorf("error %q does not name %s", err, option)
	}
}

func TestRoomLimit(t *testing.T) {
	c := startServer(t, func(cfg *config.Config) { cfg.Plugins.VideoRoom.Limits.Rooms = 3 }) // the two demo rooms count
	h := attach(t, c)
	mustRequest(t, h, map[string]any{"request": "create", "room": 901}, nil)
	_, _, err := request(t, h, map[string]any{"request": "create", "room": 902}, nil)
	wantLimit(t, err, videoroom.ErrUnknown, "plugins.videoroom.limits.rooms")
	mustRequest(t, h, map[string]any{"request": "exists", "room": 1234}, nil) // still serving
	mustRequest(t, h, map[string]any{"request": "destroy", "room": 901}, nil)
	mustRequest(t, h, map[string]any{"request": "create", "room": 902}, nil)
}

func TestRoomLimitCoversConfiguredRooms(t *testing.T) {
	cfg := config.Default()
	cfg.Plugins.VideoRoom.Limits.Rooms = 1
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "plugins.videoroom.limits.rooms") {
		t.Fatalf("two configured rooms with a limit of one: %v", err)
	}
}

func TestParticipantsPerRoomLimit(t *testing.T) {
	c := startServer(t, func(cfg *config.Config) { cfg.Plugins.VideoRoom.Limits.ParticipantsPerRoom = 2 })
	join := func() error {
		_, _, err := request(t, attach(t, c), map[string]any{"request": "join", "ptype": "publisher", "room": 1234}, nil)
		return err
	}
	first := attach(t, c)
	mustRequest(t, first, map[string]any{"request": "join", "ptype": "publisher", "room": 1234}, nil)
	if err := join(); err != nil {
		t.Fatal(err)
	}
	wantLimit(t, join(), videoroom.ErrPublishersFull, "plugins.videoroom.limits.participants_per_room")
	// Another room has its own participants.
	if _, _, err := request(t, attach(t, c), map[string]any{"request": "join", "ptype": "publisher", "room": 5678}, nil); err != nil {
		t.Fatal(err)
	}
	mustRequest(t, first, map[string]any{"request": "leave"}, nil)
	if err := join(); err != nil {
		t.Fatalf("after a participant left: %v", err)
	}
}

func TestSubscriptionsPerRoomLimit(t *testing.T) {
	c := startServer(t, func(cfg *config.Config) { cfg.Plugins.VideoRoom.Limits.SubscriptionsPerRoom = 1 })
	pub := startPublisher(t, c, 1234, "pub")
	join := func() error {
		_, _, err := request(t, attach(t, c), map[string]any{"request": "join", "ptype": "subscriber", "room": 1234,
			"streams": []map[string]any{{"feed": pub.id}}}, nil)
		return err
	}
	first := attach(t, c)
	// The feed can be subscribed to once its media is up; a refusal for that (428) holds no slot.
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, _, err := request(t, first, map[string]any{"request": "join", "ptype": "subscriber", "room": 1234, "streams": []map[string]any{{"feed": pub.id}}}, nil)
		if err == nil {
			break
		}
		if videoroom.ErrNoSuchFeed != codeOf(err) || time.Now().After(deadline) {
			t.Fatalf("first subscription: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	wantLimit(t, join(), videoroom.ErrPublishersFull, "plugins.videoroom.limits.subscriptions_per_room")
	// A refused subscription holds no slot, and a refused one for a missing feed neither.
	_, _, err := request(t, attach(t, c), map[string]any{"request": "join", "ptype": "subscriber", "room": 1234, "streams": []map[string]any{{"feed": 42}}}, nil)
	wantCode(t, err, videoroom.ErrNoSuchFeed)
	mustRequest(t, first, map[string]any{"request": "leave"}, nil)
	if err := join(); err != nil {
		t.Fatalf("after the subscriber left: %v", err)
	}
	wantLimit(t, join(), videoroom.ErrPublishersFull, "subscriptions_per_room")
}

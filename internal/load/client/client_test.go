package client

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/load/loadtest"
	"github.com/strata-rtc/strata/internal/load/mediasrc"
)

func newEnv(t *testing.T, server string, layers []mediasrc.Layer, substream int) *Env {
	t.Helper()
	m, err := mediasrc.Load(mediasrc.DefaultDir(), layers)
	if err != nil {
		t.Fatal(err)
	}
	env, err := NewEnv(Config{Server: server, Room: 4242, Media: m, Substream: substream, JoinTimeout: 15 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return env
}

// TestPublishSubscribeAndRenegotiate runs a simulcast publisher, a receive-only subscriber, then a
// second publisher added to the subscription by renegotiation, against strata's videoroom.
func TestPublishSubscribeAndRenegotiate(t *testing.T) {
	httpURL, wsURL := loadtest.StartStrata(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for name, url := range map[string]string{"http": httpURL, "ws": wsURL} {
		t.Run(name, func(t *testing.T) {
			env := newEnv(t, url, mediasrc.Layers, 1)
			admin, err := Connect(ctx, env)
			if err != nil {
				t.Fatal(err)
			}
			defer admin.Close(ctx)
			if ok, err := admin.Exists(ctx, env.Room); err != nil || ok {
				t.Fatalf("room exists before creation: %v %v", ok, err)
			}
			if err := admin.Create(ctx, env.Room, 4); err != nil {
				t.Fatal(err)
			}
			defer func() { _ = admin.Destroy(ctx, env.Room) }()

			p1, err := JoinPublisher(ctx, env, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer p1.Close(ctx)
			sub, err := JoinSubscriber(ctx, env, 0, nil, []uint64{p1.ID})
			if err != nil {
				t.Fatal(err)
			}
			defer sub.Close(ctx)
			p2, err := JoinPublisher(ctx, env, 1)
			if err != nil {
				t.Fatal(err)
			}
			defer p2.Close(ctx)
			if err := sub.Add(ctx, []uint64{p2.ID}); err != nil {
				t.Fatal(err)
			}
			if ids, err := admin.Publishers(ctx, env.Room); err != nil || len(ids) != 2 {
				t.Fatalf("listparticipants: %v %v", ids, err)
			}
			time.Sleep(3 * time.Second)
			now := env.Now()
			streams := sub.Streams()
			if len(streams) != 4 {
				t.Fatalf("%d streams, want audio and video of 2 feeds", len(streams))
			}
			for _, st := range streams {
				s := st.Summarize(now)
				t.Logf("feed %d %s: %+v", st.Feed, st.Kind, s)
				if s.TTFFMs < 0 || s.Frames == 0 || s.KbitPerSec <= 0 {
					t.Errorf("feed %d %s: nothing decodable received: %+v", st.Feed, st.Kind, s)
				}
				if st.Kind == "video" && s.Keyframes == 0 {
					t.Errorf("feed %d: video without a keyframe", st.Feed)
				}
			}
			if sent := p1.Sent(); sent.Packets == 0 || sent.Errors != 0 {
				t.Errorf("publisher sent %+v", sent)
			}
		})
	}
}

func TestMissingRoomAndUnreachableServer(t *testing.T) {
	httpURL, _ := loadtest.StartStrata(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	env := newEnv(t, httpURL, nil, -1)
	env.Room = 999999
	if _, err := JoinPublisher(ctx, env, 0); err == nil || !strings.Contains(err.Error(), "426") {
		t.Fatalf("joining a room that does not exist: %v, want the videoroom's error 426", err)
	}
	env = newEnv(t, "http://127.0.0.1:1/janus", nil, -1)
	if _, err := Connect(ctx, env); err == nil || !strings.Contains(err.Error(), "cannot reach http://127.0.0.1:1/janus") {
		t.Fatalf("closed port: %v", err)
	}
}

package audiobridge_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/config"
)

var tones = []float64{440, 700, 1100}

// heardTones measures each tone in the talker's recent mix (channel 0).
func heardTones(tk *talker, d time.Duration) []float64 {
	pcm := tk.recent(d)
	out := make([]float64, len(tones))
	for i, hz := range tones {
		out[i] = tk.toneIn(pcm, 0, hz)
	}
	return out
}

// TestEachHearsTheOthersNotItself: three participants send real Opus carrying distinct tones
// through Pion; each one's decoded mix holds the two other tones and not its own. Muting one
// takes its tone out of the others' mixes; a volume of 30 scales it.
// The third participant joins with generate_offer: the plugin offers, it answers in configure.
func TestEachHearsTheOthersNotItself(t *testing.T) {
	c := startServer(t, nil)
	var ps []*talker
	for i, hz := range tones {
		var extra map[string]any
		if i == 2 {
			extra = map[string]any{"generate_offer": true}
		}
		ps = append(ps, joinTalker(t, c, 1234, hz, 1, extra))
	}
	time.Sleep(time.Second) // prebuffering and the first ticks
	for i, p := range ps {
		got := heardTones(p, 600*time.Millisecond)
		t.Logf("participant %d (%v Hz) hears %.3f", i, tones[i], got)
		for j := range tones {
			if j == i && got[j] > 0.01 {
				t.Errorf("participant %d hears its own %v Hz tone at %.3f: %v", i, tones[j], got[j], got)
			}
			if j != i && got[j] < 0.08 {
				t.Errorf("participant %d hears %v Hz at only %.3f: %v", i, tones[j], got[j], got)
			}
		}
	}

	before := heardTones(ps[0], 600*time.Millisecond)
	mustRequest(t, ps[2].h, map[string]any{"request": "configure", "volume": 30}, nil)
	mustRequest(t, ps[1].h, map[string]any{"request": "configure", "muted": true}, nil)
	time.Sleep(400 * time.Millisecond)
	after := heardTones(ps[0], 600*time.Millisecond)
	t.Logf("participant 0 hears %.3f, then %.3f with 1 muted and 2 at volume 30", before, after)
	if after[1] > 0.01 {
		t.Errorf("participant 0 still hears the muted %v Hz tone at %.3f", tones[1], after[1])
	}
	if ratio := after[2] / before[2]; ratio < 0.2 || ratio > 0.4 {
		t.Errorf("volume 30 scaled the %v Hz tone by %.2f (%.3f → %.3f), want about 0.3", tones[2], ratio, before[2], after[2])
	}
	mustRequest(t, ps[1].h, map[string]any{"request": "configure", "muted": false}, nil)
	time.Sleep(400 * time.Millisecond)
	if got := heardTones(ps[0], 600*time.Millisecond); got[1] < 0.08 {
		t.Errorf("after unmute participant 0 hears %v Hz at only %.3f", tones[1], got[1])
	}
}

// TestSpatialAudioPans: in a spatial room a participant at position 0 is heard on the left only,
// one at 100 on the right only.
func TestSpatialAudioPans(t *testing.T) {
	c := startServer(t, func(cfg *config.Config) {
		cfg.Plugins.AudioBridge.Rooms = append(cfg.Plugins.AudioBridge.Rooms,
			config.AudioBridgeRoom{ID: 77, SamplingRate: 48000, SpatialAudio: true})
	})
	listener := joinTalker(t, c, 77, 0, 2, nil)
	joinTalker(t, c, 77, tones[0], 2, map[string]any{"spatial_position": 0})
	joinTalker(t, c, 77, tones[2], 2, map[string]any{"spatial_position": 100})
	time.Sleep(time.Second)
	pcm := listener.recent(600 * time.Millisecond)
	leftLow, rightLow := listener.toneIn(pcm, 0, tones[0]), listener.toneIn(pcm, 1, tones[0])
	leftHigh, rightHigh := listener.toneIn(pcm, 0, tones[2]), listener.toneIn(pcm, 1, tones[2])
	if leftLow < 0.05 || rightLow > leftLow/10 {
		t.Errorf("the participant at 0: left %.3f, right %.3f; want it on the left", leftLow, rightLow)
	}
	if rightHigh < 0.05 || leftHigh > rightHigh/10 {
		t.Errorf("the participant at 100: left %.3f, right %.3f; want it on the right", leftHigh, rightHigh)
	}
}

// TestTalkingEvents: in a room with audiolevel_event, a participant whose packets carry loud
// levels is announced as talking to everyone, itself included, and as stopped when it goes quiet;
// the speaker joined with generate_offer, so the levels are read on a plugin-offered session too.
func TestTalkingEvents(t *testing.T) {
	c := startServer(t, func(cfg *config.Config) {
		cfg.Plugins.AudioBridge.Rooms = append(cfg.Plugins.AudioBridge.Rooms,
			config.AudioBridgeRoom{ID: 78, AudioLevelEvent: true, AudioActivePackets: 10, AudioLevelAverage: 40})
	})
	other := joinTalker(t, c, 78, 0, 1, nil)
	speaker := joinTalker(t, c, 78, tones[0], 1, map[string]any{"generate_offer": true})
	is := func(name string, id uint64) func(map[string]any) bool {
		return func(d map[string]any) bool {
			return d["audiobridge"] == name && d["id"] == float64(id) && d["room"] == float64(78)
		}
	}
	waitEvent(t, other.h, 5*time.Second, is("talking", speaker.id))
	waitEvent(t, speaker.h, 5*time.Second, is("talking", speaker.id))
	speaker.setTone(0)
	waitEvent(t, other.h, 5*time.Second, is("stopped-talking", speaker.id))
	data, _ := mustRequest(t, other.h, map[string]any{"request": "listparticipants", "room": 78}, nil)
	if ps := data["participants"].([]any); len(ps) != 2 || fmt.Sprint(ps[1].(map[string]any)["talking"]) != "false" {
		t.Errorf("listparticipants %v: want both, the speaker with talking false", data)
	}
}

// TestChangeRoomKeepsThePeerConnection: a participant changes room on the same PeerConnection;
// the old room hears it leave, the new one join, and it now hears the new room's talker. A
// hangup then takes it out of the room.
func TestChangeRoomKeepsThePeerConnection(t *testing.T) {
	c := startServer(t, func(cfg *config.Config) {
		cfg.Plugins.AudioBridge.Rooms = append(cfg.Plugins.AudioBridge.Rooms,
			config.AudioBridgeRoom{ID: 80}, config.AudioBridgeRoom{ID: 81, SamplingRate: 48000})
	})
	a := joinTalker(t, c, 80, tones[0], 1, nil)
	b := joinTalker(t, c, 81, tones[2], 1, nil)
	mover := joinTalker(t, c, 80, 0, 1, nil)
	time.Sleep(500 * time.Millisecond)
	if got := heardTones(mover, 600*time.Millisecond); got[0] < 0.08 || got[2] > 0.01 {
		t.Fatalf("in room 80 the mover hears %.3f", got)
	}
	data, _ := mustRequest(t, mover.h, map[string]any{"request": "changeroom", "room": 81}, nil)
	if data["audiobridge"] != "roomchanged" || data["room"] != float64(81) {
		t.Fatalf("changeroom: %v", data)
	}
	waitEvent(t, a.h, 5*time.Second, func(d map[string]any) bool { return d["leaving"] == float64(mover.id) })
	waitEvent(t, b.h, 5*time.Second, func(d map[string]any) bool { return d["audiobridge"] == "joined" })
	time.Sleep(500 * time.Millisecond)
	if got := heardTones(mover, 600*time.Millisecond); got[2] < 0.08 || got[0] > 0.01 {
		t.Fatalf("in room 81 the mover hears %.3f", got)
	}
	newID := data["id"].(float64)
	mustRequest(t, mover.h, map[string]any{"request": "hangup"}, nil)
	waitEvent(t, b.h, 5*time.Second, func(d map[string]any) bool { return d["leaving"] == newID })
}

package client

import (
	"context"
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/load/loadtest"
	"github.com/strata-rtc/strata/internal/load/mediasrc"
	"github.com/strata-rtc/strata/internal/load/voice"
)

// TestAudioBridgeParticipantsHearTheTalker joins two participants to strata's audio bridge, one
// talking all along and one quiet, as Janus's demo page does. The quiet one's mix must carry the
// talker's speech (decoded with libopus), the talker's own mix must not (mix minus self), and
// the levels the talker sends must make the server report it talking.
func TestAudioBridgeParticipantsHearTheTalker(t *testing.T) {
	httpURL, _ := loadtest.StartStrata(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	env, err := NewEnv(Config{Server: httpURL, Room: 4343, Plugin: AudioBridgePlugin, Media: &mediasrc.Media{}, JoinTimeout: 15 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	admin, err := Connect(ctx, env)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	// The talker's level averages about 37 (-dBov) with its pauses, above Janus's default
	// threshold of 25 (louder than -25 dBov on average), hence audio_level_average 50.
	if _, err := admin.h.Message(ctx, map[string]any{"request": "create", "room": env.Room, "sampling_rate": 16000,
		"audiolevel_event": true, "audio_active_packets": 25, "audio_level_average": 50}, nil); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = admin.Destroy(ctx, env.Room) }()
	if ok, err := admin.Exists(ctx, env.Room); err != nil || !ok {
		t.Fatalf("room not created: %v %v", ok, err)
	}

	bank, err := voice.Default()
	if err != nil {
		t.Fatal(err)
	}
	// One place to talk, held for an hour by the first to take it (participant 0, the only one
	// eligible when it falls free).
	floor := voice.NewFloor(voice.Pattern{Talkers: 1, SpurtMin: time.Hour, SpurtMax: time.Hour, PauseMax: 0}, 2)
	floor.Advance(0, 1)
	if !floor.Talking(0) {
		t.Fatal("participant 0 does not talk")
	}
	listen := func(i int) *Listener {
		l, err := NewListener(func(now time.Duration) voice.Expectation { return floor.Expect(i, now) })
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	talker, err := JoinParticipant(ctx, env, 0, voice.NewSource(bank, floor, 0), listen(0))
	if err != nil {
		t.Fatal(err)
	}
	defer talker.Close(ctx)
	quiet, err := JoinParticipant(ctx, env, 1, voice.NewSource(bank, floor, 1), listen(1))
	if err != nil {
		t.Fatal(err)
	}
	defer quiet.Close(ctx)
	if talker.ID == 0 || quiet.ID == talker.ID || audioLevelID(talker.pc) == 0 {
		t.Fatalf("ids %d %d, audio level extension %d", talker.ID, quiet.ID, audioLevelID(talker.pc))
	}
	time.Sleep(4 * time.Second)

	heard, own := quiet.Listener().Counts(), talker.Listener().Counts()
	t.Logf("quiet participant heard %+v; talker heard %+v", heard, own)
	// Speech has pauses between syllables and phrases: most frames, not all, are loud.
	if heard.Errors != 0 || heard.SpeechFrames < 50 || heard.SpeechDBSum/float64(heard.SpeechFrames) < -50 || heard.Audible < heard.SpeechFrames/2 {
		t.Errorf("the quiet participant's mix does not carry the talker: %+v", heard)
	}
	// The talker's mix is the quiet participant's quiet room only.
	if own.Decoded < 50 || own.SilenceFrames == 0 || own.SilenceAudible != 0 || own.SilenceDBSum/float64(own.SilenceFrames) > -50 {
		t.Errorf("the talker hears itself: %+v", own)
	}
	for _, p := range []*Participant{talker, quiet} {
		s := p.Mix().Summarize(env.Now())
		if s.Packets < 100 || s.LossRatio > 0.05 || !s.Live {
			t.Errorf("participant %d: mix %+v", p.Index, s)
		}
		if sent := p.Sent(); sent.Packets < 100 || sent.Errors != 0 {
			t.Errorf("participant %d sent %+v", p.Index, sent)
		}
	}
	if quiet.TalkingEvents() == 0 {
		t.Error("no talking event: the server did not see the talker's audio levels")
	}
}

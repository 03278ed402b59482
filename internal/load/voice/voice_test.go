package voice

import (
	"slices"
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/audio"
)

// TestBankIsSpeechAtChromiumsRate decodes every frame of the bank with libopus and checks what a
// server receives: one 20 ms frame per packet, speech around SpeechDBov with pauses, the quiet
// room around NoiseDBov, the levels in the extension matching the audio, and about Chromium's
// 32 kbit/s.
func TestBankIsSpeechAtChromiumsRate(t *testing.T) {
	b, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Talk) != DefaultVoices || len(b.Quiet) != quietSeconds*50 {
		t.Fatalf("bank: %d voices, %d quiet frames", len(b.Talk), len(b.Quiet))
	}
	dec, err := audio.NewDecoder(audio.Format{Rate: Rate, Channels: 1})
	if err != nil {
		t.Fatal(err)
	}
	pcm := make([]int16, frameSamples)
	check := func(name string, frames []Frame, wantMedianLevel, tolerance int) {
		var bytes int
		var levels []int
		voiced := 0
		var loudLevel, loudDecoded float64
		loud := 0
		for i, f := range frames {
			if err := dec.Decode(f.Payload, pcm); err != nil {
				t.Fatalf("%s frame %d: %v", name, i, err)
			}
			bytes += len(f.Payload)
			if f.Voice || name == "quiet" {
				levels = append(levels, int(f.Level))
			}
			if f.Voice {
				voiced++
			}
			if f.Level <= 30 && i > 0 {
				loud++
				loudLevel += -float64(f.Level)
				loudDecoded += DBov(pcm)
			}
		}
		// Loud frames decode loud: on average within a few dB of their level (the decoder's 6.5 ms
		// delay moves the edges of syllables into the next frame).
		if loud > 0 && loudDecoded/float64(loud) < loudLevel/float64(loud)-4 {
			t.Errorf("%s: frames at level ≤ 30 decode at %.1f dBov on average, their levels say %.1f", name,
				loudDecoded/float64(loud), loudLevel/float64(loud))
		}
		kbps := float64(bytes) * 8 / float64(len(frames)) / 20
		slices.Sort(levels)
		t.Logf("%s: %.1f kbit/s, median level (of voiced frames) %d, %d%% voiced", name, kbps, levels[len(levels)/2], 100*voiced/len(frames))
		if kbps < 15 || kbps > 40 {
			t.Errorf("%s: %.1f kbit/s, want about Chromium's 32", name, kbps)
		}
		if m := levels[len(levels)/2]; m < wantMedianLevel-tolerance || m > wantMedianLevel+tolerance {
			t.Errorf("%s: median level %d, want %d±%d", name, m, wantMedianLevel, tolerance)
		}
	}
	for v, clip := range b.Talk {
		check("voice "+string(rune('0'+v)), clip, -SpeechDBov, 6)
		voiced := 0
		for _, f := range clip {
			if f.Voice {
				voiced++
			}
		}
		if voiced < len(clip)/3 || voiced > len(clip)*9/10 {
			t.Errorf("voice %d: %d of %d frames voiced: speech has pauses, but not mostly", v, voiced, len(clip))
		}
	}
	check("quiet", b.Quiet, -NoiseDBov, 3)
	for _, f := range b.Quiet {
		if f.Voice {
			t.Fatal("the quiet room has voice activity")
		}
	}
	if _, err := NewBank(0); err == nil {
		t.Fatal("a bank of no voices")
	}
}

func TestFrameExtByte(t *testing.T) {
	if b := (Frame{Level: 20, Voice: true}).ExtByte(); b != 0x80|20 {
		t.Fatalf("%#x", b)
	}
	if b := (Frame{Level: 127}).ExtByte(); b != 127 {
		t.Fatalf("%#x", b)
	}
	if LevelOf(make([]int16, 960)) != 127 || DBov(nil) != -127 {
		t.Fatal("silence is not level 127")
	}
	full := make([]int16, 960)
	for i := range full {
		full[i] = 32767
	}
	if LevelOf(full) != 0 {
		t.Fatal("full scale is not level 0")
	}
}

// run advances a floor for d in 20 ms steps and calls each at every step.
func run(f *Floor, d time.Duration, eligible func(time.Duration) int, each func(now time.Duration)) {
	for now := time.Duration(0); now < d; now += 20 * time.Millisecond {
		f.Advance(now, eligible(now))
		each(now)
	}
}

func TestFloorKeepsToThePattern(t *testing.T) {
	p := DefaultPattern()
	const n = 200
	f := NewFloor(p, n)
	started := map[int]time.Duration{}
	var spurts []time.Duration
	talkedOnce := map[int]bool{}
	busy, steps := 0, 0
	run(f, 10*time.Minute, func(time.Duration) int { return n }, func(now time.Duration) {
		talking := 0
		for i := 0; i < n; i++ {
			on := f.Talking(i)
			if on {
				talking++
				talkedOnce[i] = true
				if _, ok := started[i]; !ok {
					started[i] = now
				}
			} else if s, ok := started[i]; ok {
				spurts = append(spurts, now-s)
				delete(started, i)
			}
		}
		if talking > p.Talkers {
			t.Fatalf("%d talking at %v, at most %d", talking, now, p.Talkers)
		}
		if talking != f.Talkers() {
			t.Fatalf("Talkers() %d, %d talking", f.Talkers(), talking)
		}
		steps++
		if talking > 0 {
			busy++
		}
	})
	for _, s := range spurts {
		// Spurts are seen at 20 ms steps.
		if s < p.SpurtMin || s > p.SpurtMax+20*time.Millisecond {
			t.Fatalf("spurt of %v outside %v…%v", s, p.SpurtMin, p.SpurtMax)
		}
	}
	t.Logf("%d spurts by %d participants, someone talking %.0f%% of the time", len(spurts), len(talkedOnce), 100*float64(busy)/float64(steps))
	if len(spurts) < 300 || len(talkedOnce) < n/2 || busy < steps*8/10 {
		t.Errorf("a call where %d spurts by %d participants fill %d of %d steps", len(spurts), len(talkedOnce), busy, steps)
	}
}

func TestFloorIsSeededAndTalksOnlyAmongTheJoined(t *testing.T) {
	trace := func(seed uint64) []int {
		p := DefaultPattern()
		p.Seed = seed
		f := NewFloor(p, 50)
		var out []int
		// Participants join one a second; only the joined may talk.
		run(f, time.Minute, func(now time.Duration) int { return int(now / time.Second) }, func(now time.Duration) {
			for i := 0; i < 50; i++ {
				if f.Talking(i) {
					if i >= int(now/time.Second) {
						t.Fatalf("participant %d talks at %v before joining", i, now)
					}
					out = append(out, i)
				}
			}
		})
		return out
	}
	a, b, c := trace(7), trace(7), trace(8)
	if !slices.Equal(a, b) || len(a) == 0 {
		t.Fatal("the same seed gave different calls")
	}
	if slices.Equal(a, c) {
		t.Fatal("another seed gave the same call")
	}
	f := NewFloor(DefaultPattern(), 3)
	f.Advance(time.Hour, 0)
	if f.Talkers() != 0 || f.Talking(-1) || f.Talking(5) {
		t.Fatal("someone talks in an empty room")
	}
	quiet := NewFloor(Pattern{Talkers: 0, SpurtMin: time.Second, SpurtMax: time.Second}, 3)
	quiet.Advance(time.Hour, 3)
	if quiet.Talkers() != 0 || quiet.Expect(0, time.Hour) != Silence {
		t.Fatal("a pattern of no talkers talks")
	}
}

func TestPatternValidate(t *testing.T) {
	if err := DefaultPattern().Validate(); err != nil {
		t.Fatal(err)
	}
	for _, p := range []Pattern{
		{Talkers: -1, SpurtMin: 1, SpurtMax: 1},
		{Talkers: 1, SpurtMin: 0, SpurtMax: 1},
		{Talkers: 1, SpurtMin: 2, SpurtMax: 1},
		{Talkers: 1, SpurtMin: 1, SpurtMax: 1, PauseMin: 2, PauseMax: 1},
	} {
		if p.Validate() == nil {
			t.Errorf("%+v accepted", p)
		}
	}
}

func TestExpect(t *testing.T) {
	p := Pattern{Talkers: 1, SpurtMin: 2 * time.Second, SpurtMax: 2 * time.Second, PauseMin: time.Second, PauseMax: time.Second}
	f := NewFloor(p, 2)
	// The place falls free somewhere in the first second; find when participant 0 or 1 starts.
	var start time.Duration
	who := -1
	for now := time.Duration(0); who < 0; now += 10 * time.Millisecond {
		f.Advance(now, 2)
		for i := 0; i < 2; i++ {
			if f.Talking(i) {
				who, start = i, now
			}
		}
	}
	other := 1 - who
	cases := []struct {
		at   time.Duration
		self int
		want Expectation
	}{
		{start + 100*time.Millisecond, other, Unsure},
		{start + SpeechSettle, other, Speech},
		{start + SpeechSettle, who, Silence}, // the talker's own mix is quiet
		{start + 2*time.Second + 100*time.Millisecond, other, Unsure},
		{start + 2*time.Second + SilenceSettle, other, Silence},
	}
	for _, c := range cases {
		f.Advance(c.at, 2)
		if got := f.Expect(c.self, c.at); got != c.want {
			t.Errorf("at start+%v, participant %d (talker %d): %v, want %v", c.at-start, c.self, who, got, c.want)
		}
	}
}

func TestSourceFollowsTheFloor(t *testing.T) {
	b, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	f := NewFloor(Pattern{Talkers: 1, SpurtMin: time.Second, SpurtMax: time.Second, PauseMin: time.Hour, PauseMax: time.Hour}, 2)
	s0, s1 := NewSource(b, f, 0), NewSource(b, f, 1)
	// Nobody talks before the first place falls free (within the first PauseMax): quiet frames.
	if _, ext := s0.Next(); ext&0x80 != 0 || ext&0x7f < 60 {
		t.Fatalf("quiet frame with extension %#x", ext)
	}
	f.Advance(time.Hour, 2)
	talker := NewSource(b, f, 0)
	if f.Talking(1) {
		talker = s1
	}
	voiced := 0
	for range 50 {
		if _, ext := talker.Next(); ext&0x80 != 0 {
			voiced++
		}
	}
	if frames, talking := talker.Spoken(); talking != 50 || frames != 50 || voiced == 0 {
		t.Fatalf("talker: %d frames, %d talking, %d voiced", frames, talking, voiced)
	}
	if n := testing.AllocsPerRun(500, func() { s0.Next() }); n != 0 {
		t.Fatalf("Next allocates %v", n)
	}
}

package audio

import "testing"

func TestTalkDetectorJanusRule(t *testing.T) {
	d := NewTalkDetector(5, 25)
	feed := func(level uint8, n int) (events int) {
		for i := 0; i < n; i++ {
			if _, changed := d.Observe(level); changed {
				events++
			}
		}
		return events
	}
	if feed(127, 10) != 0 || d.Talking() {
		t.Fatal("silence made a talker")
	}
	if feed(20, 4) != 0 || d.Talking() {
		t.Fatal("decided before 5 packets")
	}
	if feed(20, 1) != 1 || !d.Talking() {
		t.Fatal("5 loud packets: want talking")
	}
	if feed(20, 5) != 0 {
		t.Fatal("still talking is not an event")
	}
	// Average exactly 25 is not below 25: stopped talking.
	if feed(25, 5) != 1 || d.Talking() {
		t.Fatal("average 25: want stopped")
	}
	// Mixed window: 3×0 + 2×127 averages 50.8: silent.
	feed(0, 3)
	if feed(127, 2) != 0 || d.Talking() {
		t.Fatal("average 50.8 counted as talking")
	}
	d.Reset()
	if d.Talking() {
		t.Fatal("reset kept talking")
	}
}

func TestTalkDetectorDefaults(t *testing.T) {
	d := NewTalkDetector(0, -3)
	if d.packets != DefaultAudioActivePackets || d.average != DefaultAudioLevelAverage {
		t.Fatalf("%+v", d)
	}
	for i := 0; i < 99; i++ {
		if _, changed := d.Observe(200); changed {
			t.Fatal("out-of-range level counted as loud")
		}
	}
}

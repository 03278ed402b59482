package config

import (
	"reflect"
	"testing"

	"github.com/strata-rtc/strata/internal/record"
)

// The reference's containers are the recorder's defaults; the switch is off by default.
func TestRecordingReferenceIsTheRecordersDefaults(t *testing.T) {
	r := Default().Recording
	if r.Playable {
		t.Error("recording.playable is on by default")
	}
	if !reflect.DeepEqual(r.Containers, record.DefaultFormats) {
		t.Errorf("configs/strata.yaml recording.containers %v, record.DefaultFormats %v", r.Containers, record.DefaultFormats)
	}
}

func TestRecordingContainersAreChecked(t *testing.T) {
	c, err := Parse([]byte("recording:\n  playable: true\n  containers:\n    vp8: mkv\n"), "ok.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if c.Recording.Containers["vp8"] != "mkv" || c.Recording.Containers["h264"] != "mp4" {
		t.Errorf("containers %v: want vp8 overridden, the others kept", c.Recording.Containers)
	}
	for _, bad := range []string{"vp8: mp4", "h264: webm", "vp8: avi", "pcmu: ogg", "audio: mov"} {
		if _, err := Parse([]byte("recording:\n  containers:\n    "+bad+"\n"), "bad.yaml"); err == nil {
			t.Errorf("accepted %q", bad)
		}
	}
}

package config

import (
	"strings"
	"testing"
)

func TestAudioBridgeDefaults(t *testing.T) {
	a := Default().Plugins.AudioBridge
	if !a.Enabled || a.AdminKey != "" || a.LockRTPForward || a.LockPlayFile {
		t.Errorf("audiobridge defaults %+v: want on (Janus's demo page expects it), no admin_key, no locks", a)
	}
	if a.Limits.Rooms <= 0 || a.Limits.ParticipantsPerRoom <= 0 {
		t.Errorf("audiobridge limits %+v: want positive", a.Limits)
	}
	if len(a.Rooms) != 1 {
		t.Fatalf("rooms %+v: want Janus's demo room", a.Rooms)
	}
	r := a.Rooms[0]
	if r.ID != 1234 || r.SamplingRate != 16000 || r.Secret != "" || r.AudioLevelExt == nil || !*r.AudioLevelExt ||
		r.DefaultPrebuffering == nil || *r.DefaultPrebuffering != 6 {
		t.Errorf("room 1234 = %+v: want 16 kHz, audiolevel_ext, prebuffering 6, secret generated at start", r)
	}
}

func TestAudioBridgeRoomsValidated(t *testing.T) {
	ok := []string{
		"plugins:\n  audiobridge:\n    rooms:\n      - id: 7\n",
		"plugins:\n  audiobridge:\n    enabled: true\n    admin_key: k\n    lock_play_file: true\n    rooms:\n      - {id: 7, sampling_rate: 48000, default_prebuffering: 0, groups: [a, b]}\n",
	}
	for _, text := range ok {
		c, err := Parse([]byte(text), "ok.yaml")
		if err != nil {
			t.Errorf("%s: %v", text, err)
			continue
		}
		if len(c.Plugins.AudioBridge.Rooms) != 1 || c.Plugins.AudioBridge.Rooms[0].ID != 7 {
			t.Errorf("%s: rooms %+v, want the file's list alone", text, c.Plugins.AudioBridge.Rooms)
		}
	}
	bad := map[string]string{
		"sampling_rate 44100":      "rooms:\n      - {id: 7, sampling_rate: 44100}",
		"id 0":                     "rooms:\n      - {id: 0}",
		"repeated id":              "rooms:\n      - {id: 7}\n      - {id: 7}",
		"prebuffering 51":          "rooms:\n      - {id: 7, default_prebuffering: 51}",
		"negative prebuffering":    "rooms:\n      - {id: 7, default_prebuffering: -1}",
		"expected loss 21":         "rooms:\n      - {id: 7, default_expectedloss: 21}",
		"bitrate 100":              "rooms:\n      - {id: 7, default_bitrate: 100}",
		"level average 128":        "rooms:\n      - {id: 7, audio_level_average: 128}",
		"six groups":               "rooms:\n      - {id: 7, groups: [a, b, c, d, e, f]}",
		"lock without key":         "lock_rtp_forward: true",
		"unknown option":           "rooms:\n      - {id: 7, sampling: 16000}",
		"sample secret, exposed":   "rooms:\n      - {id: 7, secret: adminpwd}",
		"sample admin_key exposed": "admin_key: supersecret",
	}
	for name, text := range bad {
		_, err := Parse([]byte("plugins:\n  audiobridge:\n    "+text+"\n"), "bad.yaml")
		if err == nil || !strings.Contains(err.Error(), "bad.yaml") {
			t.Errorf("%s: %v, want an error naming the file", name, err)
		}
	}
}

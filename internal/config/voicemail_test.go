package config

import (
	"strings"
	"testing"
)

func TestVoiceMailOptions(t *testing.T) {
	for _, tc := range []struct {
		yaml, err string // err "" for valid
	}{
		{"base: /voicemail/", ""},
		{"base: https://example.com/vm/", ""},
		{"base: /", "plugins.voicemail.base"},
		{"base: voicemail", "plugins.voicemail.base"},
		{"base: ftp://example.com/vm/", "plugins.voicemail.base"},
		{"base: https://example.com", "plugins.voicemail.base"},
		{"path: \"\"", "plugins.voicemail.path"},
		{"max_duration: 0s", "plugins.voicemail.max_duration"},
	} {
		_, err := Parse([]byte("plugins:\n  voicemail:\n    "+tc.yaml+"\n"), "test.yaml")
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("%s: %v", tc.yaml, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%s: error %v, want one about %s", tc.yaml, err, tc.err)
		}
	}
}

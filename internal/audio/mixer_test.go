package audio

import "testing"

func constFrame(f Format, ch int, v int16) []int16 {
	p := make([]int16, f.Samples()*ch)
	for i := range p {
		p[i] = v
	}
	return p
}

func TestMixerFullAndMinusSelf(t *testing.T) {
	f := Format{Rate: 16000, Channels: 1}
	m, _ := NewMixer(f)
	srcs := []Source{
		{PCM: constFrame(f, 1, 1000), Channels: 1, Volume: 100},
		{PCM: constFrame(f, 1, 200), Channels: 1, Volume: 50},
		{PCM: constFrame(f, 1, 5000), Channels: 1, Volume: 100, Muted: true},
		{Channels: 1, Volume: 100}, // silent
	}
	if err := m.Mix(srcs); err != nil {
		t.Fatal(err)
	}
	if got := m.Full()[7]; got != 1100 {
		t.Fatalf("full %d, want 1000 + 200×50%%", got)
	}
	if got := m.MinusSelf(0)[0]; got != 100 {
		t.Fatalf("minus 0: %d", got)
	}
	if got := m.MinusSelf(1)[0]; got != 1000 {
		t.Fatalf("minus 1: %d", got)
	}
	if m.Contributed(2) || m.Contributed(3) || !m.Contributed(0) || m.Contributed(99) {
		t.Fatal("contributions wrong")
	}
	if &m.MinusSelf(2)[0] != &m.Full()[0] {
		t.Fatal("a muted listener hears the full mix")
	}
}

func TestMixerSaturates(t *testing.T) {
	f := Format{Rate: 8000, Channels: 1}
	m, _ := NewMixer(f)
	srcs := make([]Source, 4)
	for i := range srcs {
		srcs[i] = Source{PCM: constFrame(f, 1, -30000), Channels: 1, Volume: 100}
	}
	m.Mix(srcs)
	if m.Full()[0] != -32768 || m.MinusSelf(0)[0] != -32768 {
		t.Fatalf("full %d minus %d", m.Full()[0], m.MinusSelf(0)[0])
	}
	srcs[1].PCM = constFrame(f, 1, 30000)
	srcs[2].PCM, srcs[3].PCM = nil, nil
	m.Mix(srcs)
	if m.Full()[0] != 0 || m.MinusSelf(1)[0] != -30000 {
		t.Fatalf("full %d minus %d", m.Full()[0], m.MinusSelf(1)[0])
	}
}

func TestMixerPansInAStereoRoom(t *testing.T) {
	f := Format{Rate: 16000, Channels: 2}
	m, _ := NewMixer(f)
	srcs := []Source{
		{PCM: constFrame(f, 1, 1000), Channels: 1, Volume: 100, Pan: 0},
		{PCM: constFrame(f, 1, 1000), Channels: 1, Volume: 100, Pan: 100},
		{PCM: constFrame(f, 2, 1000), Channels: 2, Volume: 100, Pan: 50},
	}
	m.Mix(srcs)
	if l, r := m.MinusSelf(1)[0], m.MinusSelf(1)[1]; l != 1500 || r != 500 {
		t.Fatalf("without the right source: L %d R %d", l, r)
	}
	if l, r := m.MinusSelf(0)[0], m.MinusSelf(0)[1]; l != 500 || r != 1500 {
		t.Fatalf("without the left source: L %d R %d", l, r)
	}
}

func TestMixerRefusesAWrongFrame(t *testing.T) {
	f := Format{Rate: 16000, Channels: 1}
	m, _ := NewMixer(f)
	srcs := []Source{
		{PCM: make([]int16, 100), Channels: 1, Volume: 100},
		{PCM: constFrame(f, 1, 9), Channels: 1, Volume: 100},
		{PCM: constFrame(f, 2, 9), Channels: 2, Volume: 100},
	}
	if err := m.Mix(srcs); err == nil {
		t.Fatal("short frame accepted")
	}
	if m.Contributed(0) || m.Full()[0] != 18 {
		t.Fatalf("full %d", m.Full()[0])
	}
}

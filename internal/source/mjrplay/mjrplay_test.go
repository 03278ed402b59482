package mjrplay

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/media"
	"github.com/strata-rtc/strata/internal/sfu"
	"github.com/strata-rtc/strata/internal/source"
)

var _ source.Source = (*Source)(nil)

// janusSample is the recording Debian's janus package ships for its Record&Play demo, in the
// oldest .mjr format (no info header, no frame times): 10.6 s of Opus and VP8.
const janusSample = "/usr/share/janus/recordings/rec-sample-"

// Janus's sample plays whole, in real time: every packet, none before its moment on the timeline.
func TestPlaysJanusSample(t *testing.T) {
	s, recs := openWithSinks(t, janusSample+"audio.mjr", janusSample+"video.mjr")
	tr := s.Tracks()
	if tr[0].Kind != source.Audio || tr[0].Codec != media.CodecOpus || tr[0].PT != AudioPT ||
		tr[1].Kind != source.Video || tr[1].Codec != media.CodecVP8 || tr[1].PT != VideoPT {
		t.Fatalf("tracks %+v", tr)
	}
	begin := sfu.Now()
	s.Start()
	waitDone(t, s, 30*time.Second)
	elapsed := sfu.Now() - begin
	audio, video := recs[0].packets(), recs[1].packets()
	// janus-pp-rec --parse counts 529 and 176 packets in these files.
	if len(audio) != 529 || len(video) != 176 {
		t.Fatalf("played %d audio and %d video packets, want 529 and 176", len(audio), len(video))
	}
	for _, ps := range [][]got{audio, video} {
		clock := int64(48000)
		if &ps[0] == &video[0] {
			clock = 90000
		}
		for _, p := range ps {
			timeline := ticksToDur(int64(p.ts-ps[0].ts), clock)
			if early := timeline - (p.at - begin); early > 5*time.Millisecond {
				t.Fatalf("packet %d played %v before its time", p.seq, early)
			}
			if p.ssrc != ps[0].ssrc {
				t.Fatal("the SSRC changed")
			}
		}
	}
	if elapsed < 10*time.Second {
		t.Errorf("a 10.6 s recording played in %v", elapsed)
	}
	if st := s.Stats(); st.Packets != 529+176 || st.Skipped != 0 {
		t.Errorf("stats %+v", st)
	}
}

// Tracks start when their first packet was recorded: video recorded 400 ms after the audio plays
// 400 ms after it.
func TestTracksAlignedByFirstPacket(t *testing.T) {
	dir := t.TempDir()
	const u = 1_700_000_000_000_000
	a := writeMJR(t, dir, "a.mjr", "a", "opus", u, audioPkts(40, 1, 1000, 5))
	v := writeMJR(t, dir, "v.mjr", "v", "vp8", u+400_000, videoPkts(5, 1, 2000, 6))
	s, recs := openWithSinks(t, a, v)
	s.Start()
	waitDone(t, s, 5*time.Second)
	audio, video := recs[0].packets(), recs[1].packets()
	if len(audio) != 40 || len(video) != 5 {
		t.Fatalf("played %d and %d packets", len(audio), len(video))
	}
	if gap := video[0].at - audio[0].at; gap < 390*time.Millisecond || gap > 2*time.Second {
		t.Errorf("video started %v after audio, want 400 ms", gap)
	}
}

// A pause holds the playback; after it the stream continues where it stopped, its sequence
// numbers unbroken and its timestamps advanced by the pause.
func TestPauseResume(t *testing.T) {
	dir := t.TempDir()
	a := writeMJR(t, dir, "a.mjr", "a", "opus", 1_700_000_000_000_000, audioPkts(40, 100, 0, 5))
	s, recs := openWithSinks(t, a)
	s.Start()
	time.Sleep(300 * time.Millisecond)
	s.Pause()
	if !s.Paused() {
		t.Fatal("not paused")
	}
	time.Sleep(50 * time.Millisecond)
	held := len(recs[0].packets())
	time.Sleep(400 * time.Millisecond)
	if n := len(recs[0].packets()); n != held {
		t.Fatalf("%d packets played during the pause", n-held)
	}
	if held == 0 || held == 40 {
		t.Fatalf("paused after %d of 40 packets", held)
	}
	s.Resume()
	waitDone(t, s, 5*time.Second)
	ps := recs[0].packets()
	if len(ps) != 40 {
		t.Fatalf("played %d packets, want 40", len(ps))
	}
	jumps := 0
	for i := 1; i < len(ps); i++ {
		if ps[i].seq != ps[i-1].seq+1 {
			t.Fatalf("sequence %d after %d", ps[i].seq, ps[i-1].seq)
		}
		if d := ps[i].ts - ps[i-1].ts; d != 960 {
			if d < 960+48*400 { // at least the 450 ms pause, in 48 kHz ticks
				t.Errorf("timestamp step %d across the pause", d)
			}
			jumps++
		}
	}
	if jumps != 1 {
		t.Errorf("%d timestamp jumps, want the pause's one", jumps)
	}
}

// A recording whose SSRC changes (Janus does not renumber across a renegotiation) plays as one
// stream: one SSRC, unbroken sequence numbers, the new part placed by its recorded time.
func TestSSRCChangeIsOneStream(t *testing.T) {
	dir := t.TempDir()
	ps := append(audioPkts(10, 500, 7777, 1), audioPkts(10, 20000, 123456789, 2)...)
	for i := 10; i < 20; i++ {
		ps[i].at = uint32(200 + 100 + (i-10)*20) // 100 ms of silence between the two
	}
	a := writeMJR(t, dir, "a.mjr", "a", "opus", 1_700_000_000_000_000, ps)
	s, recs := openWithSinks(t, a)
	s.Start()
	waitDone(t, s, 5*time.Second)
	out := recs[0].packets()
	if len(out) != 20 {
		t.Fatalf("%d packets", len(out))
	}
	for i := 1; i < len(out); i++ {
		if out[i].seq != out[i-1].seq+1 || out[i].ssrc != out[0].ssrc {
			t.Fatalf("packet %d: seq %d ssrc %x after %d %x", i, out[i].seq, out[i].ssrc, out[i-1].seq, out[i-1].ssrc)
		}
	}
	if d := out[10].ts - out[9].ts; d != 48*120 {
		t.Errorf("timestamp step %d at the SSRC change, want %d (120 ms)", d, 48*120)
	}
}

// A file cut short plays up to the cut, which is counted; a bad frame inside one is skipped and
// counted, and the frames after it play.
func TestDamagedFilesPlayWhatTheyHold(t *testing.T) {
	dir := t.TempDir()
	a := writeMJR(t, dir, "a.mjr", "a", "opus", 1_700_000_000_000_000, audioPkts(10, 1, 0, 5))
	b, _ := os.ReadFile(a)
	if err := os.WriteFile(a, b[:len(b)-5], 0o644); err != nil {
		t.Fatal(err)
	}
	s, recs := openWithSinks(t, a)
	s.Start()
	waitDone(t, s, 5*time.Second)
	if n, st := len(recs[0].packets()), s.Stats(); n != 9 || st.Skipped != 1 || st.Packets != 9 {
		t.Errorf("truncated: %d packets, stats %+v", n, st)
	}

	ps := audioPkts(10, 1, 0, 5)
	c := writeMJR(t, dir, "c.mjr", "a", "opus", 1_700_000_000_000_000, ps)
	b, _ = os.ReadFile(c)
	cut := len(b) - 3*(10+12+3) // before the last three frames
	bad := append([]byte("MEET\x00\x00\x00\x00\x00\x05"), "short"...)
	b = append(append(append([]byte{}, b[:cut]...), bad...), b[cut:]...)
	if err := os.WriteFile(c, b, 0o644); err != nil {
		t.Fatal(err)
	}
	s, recs = openWithSinks(t, c)
	s.Start()
	waitDone(t, s, 5*time.Second)
	if n, st := len(recs[0].packets()), s.Stats(); n != 10 || st.Skipped != 1 {
		t.Errorf("bad frame: %d packets, stats %+v", n, st)
	}
}

// What cannot be played is an error at Open that says why.
func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := writeMJR(t, dir, "good.mjr", "a", "opus", 1, audioPkts(2, 1, 0, 5))
	cases := []struct {
		path, want string
	}{
		{write("text.mjr", "hello, this is not a recording"), "not a recording"},
		{write("empty.mjr", ""), "empty file"},
		{write("nopackets.mjr", "MJR00002"), "holds no packets"},
		{writeMJR(t, dir, "data.mjr", "d", "text", 1, nil), "data recording"},
		{writeMJR(t, dir, "codec.mjr", "a", "speex", 1, audioPkts(2, 1, 0, 5)), `unknown codec "speex"`},
		{writeMJR(t, dir, "kind.mjr", "v", "opus", 1, audioPkts(2, 1, 0, 5)), `codec opus in a recording of type "v"`},
		{writeMJR(t, dir, "hdronly.mjr", "a", "opus", 1, nil), "holds no packets"},
		{filepath.Join(dir, "missing.mjr"), "no such file"},
	}
	for _, c := range cases {
		_, err := Open([]string{good, c.path}, sfu.ReceiverConfig{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", filepath.Base(c.path), err, c.want)
		}
	}
	if _, err := Open(nil, sfu.ReceiverConfig{}); err == nil {
		t.Error("no files: no error")
	}
}

// Close ends a playback that was never started, or is running, and Done closes.
func TestClose(t *testing.T) {
	dir := t.TempDir()
	a := writeMJR(t, dir, "a.mjr", "a", "opus", 1, audioPkts(100, 1, 0, 5))
	s, _ := openWithSinks(t, a)
	_ = s.Close()
	waitDone(t, s, time.Second)
	s.Start() // after Close: nothing
	s, recs := openWithSinks(t, a)
	s.Start()
	time.Sleep(100 * time.Millisecond)
	_ = s.Close()
	_ = s.Close()
	waitDone(t, s, time.Second)
	n := len(recs[0].packets())
	time.Sleep(60 * time.Millisecond)
	if n == 0 || n == 100 || len(recs[0].packets()) != n {
		t.Errorf("%d packets before Close, %d after", n, len(recs[0].packets()))
	}
}

// RED's primary block becomes the packet's Opus payload.
func TestPrimaryOfRED(t *testing.T) {
	hdr := []byte{0x80, 63, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1}
	// one redundant block of 3 bytes (pt 111, offset 960, length 3), then the primary (pt 111).
	payload := []byte{0x80 | 111, 0x0f, 0x00, 3, 111, 'r', 'r', 'r', 'p', 'p'}
	out := primaryOfRED(append(hdr, payload...))
	if string(out[12:]) != "pp" || out[1]&0x7f != 111 {
		t.Errorf("got %q pt %d", out[12:], out[1]&0x7f)
	}
	bad := append(append([]byte{}, hdr...), 0x80|111, 0x0f)
	if got := primaryOfRED(bad); len(got) != len(bad) {
		t.Error("a malformed RED packet changed")
	}
}

// Sending a packet and reading the next allocates nothing.
func TestPlaybackAllocatesNothing(t *testing.T) {
	dir := t.TempDir()
	a := writeMJR(t, dir, "a.mjr", "v", "vp8", 1, videoPkts(1000, 1, 0, 5))
	s, _ := openWithSinks(t, a)
	tr := s.play[0]
	allocs := testing.AllocsPerRun(500, func() {
		tr.send(sfu.Now())
		tr.advance()
	})
	if allocs != 0 {
		t.Errorf("%.1f allocations per packet", allocs)
	}
}

// The timeline is the RTP timestamps', as Janus's player and janus-pp-rec read it: a pause Janus's
// recorder left out of the timestamps (the frame times still show it) is left out of the playback,
// and a timestamp jump of more than 10 s (a broken stream) plays on at once.
func TestTimelineFollowsTimestamps(t *testing.T) {
	dir := t.TempDir()
	ps := audioPkts(20, 1, 0, 5)
	for i := 10; i < 20; i++ {
		ps[i].at += 3000 // recorded 3 s later, timestamps continuous: a pause left out
	}
	a := writeMJR(t, dir, "a.mjr", "a", "opus", 1, ps)
	ps = audioPkts(20, 1, 0, 5)
	for i := 10; i < 20; i++ {
		ps[i].ts += 48000 * 20 // a 20 s jump
	}
	b := writeMJR(t, dir, "b.mjr", "a", "opus", 1, ps)
	for _, path := range []string{a, b} {
		s, recs := openWithSinks(t, path)
		begin := sfu.Now()
		s.Start()
		waitDone(t, s, 3*time.Second)
		if took := sfu.Now() - begin; took > time.Second {
			t.Errorf("%s: 400 ms of packets played in %v", filepath.Base(path), took)
		}
		out := recs[0].packets()
		for i := 1; i < len(out); i++ {
			if d := out[i].ts - out[i-1].ts; d > 960 {
				t.Errorf("%s: timestamp step %d", filepath.Base(path), d)
			}
		}
	}
}

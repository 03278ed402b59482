package mjrplay

import (
	"testing"
)

// BenchmarkPlay plays a recording whose packets all share one moment (so nothing waits) through a
// Receiver with one sink: the cost of reading, renumbering and delivering one packet.
func BenchmarkPlay(b *testing.B) {
	dir := b.TempDir()
	ps := videoPkts(b.N+1, 1, 0, 5)
	for i := range ps {
		ps[i].ts, ps[i].at = 0, 0
	}
	path := writeMJR(b, dir, "v.mjr", "v", "vp8", 1, ps)
	s, _ := openWithSinks(b, path)
	b.ReportAllocs()
	b.ResetTimer()
	s.Start()
	<-s.Done()
	b.StopTimer()
	if got := s.Stats().Packets; got != uint64(b.N+1) {
		b.Fatalf("played %d packets", got)
	}
}

package videoroom_test

import (
	"fmt"
	"runtime"
	"syscall"
	"testing"
	"time"
)

// BenchmarkFanout runs one simulcast publisher and n subscribers on loopback through a complete
// strata for a fixed time and reports CPU seconds per forwarded gigabit and heap per subscriber
// PeerConnection. The Pion clients run in the same process (encrypting, decrypting, feedback), so
// both figures are upper bounds for the server alone. Run with -benchtime 1x.
func BenchmarkFanout(b *testing.B) {
	for _, n := range []int{1, 4, 8} {
		b.Run(fmt.Sprintf("subscribers=%d", n), func(b *testing.B) {
			c := startServer(b, nil)
			admin := attach(b, c)
			room := uint64(9000 + n)
			mustRequest(b, admin, map[string]any{"request": "create", "room": room, "publishers": 1}, nil)
			pub := startPublisher(b, c, room, "bench")
			waitActive(b, admin, room, pub.id)
			runtime.GC()
			var before runtime.MemStats
			runtime.ReadMemStats(&before)
			subs := make([]*testSubscriber, n)
			for i := range subs {
				subs[i] = subscribe(b, c, room, pub.id, nil)
			}
			time.Sleep(3 * time.Second) // every subscriber ramps up to the top layer
			runtime.GC()
			var after runtime.MemStats
			runtime.ReadMemStats(&after)
			bytes0 := totalBytes(subs)
			cpu0 := cpuTime()
			const window = 3 * time.Second
			time.Sleep(window)
			cpu := cpuTime() - cpu0
			bits := float64(totalBytes(subs)-bytes0) * 8
			b.ReportMetric(cpu.Seconds()/(bits/1e9), "cpu-s/Gbit")
			b.ReportMetric(bits/window.Seconds()/1e6, "Mbit/s-forwarded")
			b.ReportMetric(float64(after.HeapInuse-before.HeapInuse)/float64(n)/1024, "heap-KiB/subscriber")
		})
	}
}

func totalBytes(subs []*testSubscriber) int {
	n := 0
	for _, s := range subs {
		s.mu.Lock()
		n += s.bytes
		s.mu.Unlock()
	}
	return n
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

//go:build !race

package sfu

import (
	"bytes"
	"testing"
)

// TestDataFanoutAllocatesNothing: once the pool is warm, a message to ten sinks (sent at once, or
// queued and drained) allocates nothing.
func TestDataFanoutAllocatesNothing(t *testing.T) {
	recv := NewDataReceiver(false)
	stuck := &stuckChannel{}
	queued := NewDataSink(stuck, DataSinkConfig{QueueMessages: 8, QueueBytes: 1 << 20, BufferedHigh: 1})
	queued.Opened()
	recv.AddSink(queued)
	for range 9 {
		s := NewDataSink(discardChannel{}, DefaultDataSinkConfig())
		s.Opened()
		recv.AddSink(s)
	}
	msg := bytes.Repeat([]byte{'m'}, 1000)
	allocs := testing.AllocsPerRun(1000, func() {
		recv.Write(msg, true)
		stuck.buffered = 0
		queued.Drain() // sends one, the buffer is full again: one stays queued
	})
	if allocs != 0 {
		t.Errorf("%v allocations per message", allocs)
	}
}

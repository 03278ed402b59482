package sfu

import (
	"testing"
	"time"
)

func TestCensusTellsSharedCongestionFromOnePath(t *testing.T) {
	c := NewCensus()
	ids := make([]uint64, 10)
	for i := range ids {
		ids[i] = c.join()
	}
	now := 10 * time.Second
	step := func(congested int) bool {
		now += censusEvery
		shared := false
		for i, id := range ids {
			shared = c.report(id, now, i < congested)
		}
		return c.report(ids[0], now+censusEvery, false) || shared
	}
	if step(3) {
		t.Error("3 of 10 subscribers congested: shared")
	}
	if !step(5) {
		t.Error("5 of 10 subscribers congested at once: not shared")
	}
	now += censusWindow + censusEvery
	if step(0) {
		t.Error("still shared a window after the congestion ended")
	}
	for _, id := range ids[4:] {
		c.leave(id)
	}
	ids = ids[:4]
	if !step(4) {
		t.Error("4 of 4 congested: not shared")
	}
	now += censusWindow + censusEvery
	c.leave(ids[3])
	ids = ids[:3]
	if step(3) {
		t.Errorf("3 subscribers are too few to tell a shared cause")
	}
}

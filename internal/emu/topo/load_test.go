package topo

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/strata-rtc/strata/internal/emu/emutest"
)

var garbage atomic.Value

// TestAccuracyBesideGarbage: the endpoints share the engine's process and
// allocate (Pion, the flows' own code); the links, in a process of their
// own, must keep their accuracy while four goroutines here do nothing but
// make garbage.
func TestAccuracyBesideGarbage(t *testing.T) {
	emutest.NeedRoot(t)
	var stop atomic.Bool
	defer stop.Store(true)
	for range 4 {
		go func() {
			for !stop.Load() {
				garbage.Store(make([]byte, 64<<10))
			}
		}()
	}
	var out strings.Builder
	err := SelfTest(context.Background(), &out)
	t.Log("\n" + out.String())
	if err != nil {
		t.Fatal(err)
	}
}

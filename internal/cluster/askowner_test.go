package cluster_test

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/cluster"
	"github.com/strata-rtc/strata/internal/cluster/redistest"
)

type ownerAnswer struct {
	By       string `json:"by"`
	NotOwner bool   `json:"not_owner"`
}

// TestAskOwner: the holder of a lease serves a request itself; another node's request reaches it
// over the cluster listener, and is asked again while the holder says it is not the owner (yet).
func TestAskOwner(t *testing.T) {
	srv := redistest.Start(t)
	a := startNode(t, srv.Addr(), "a")
	b := startNode(t, srv.Addr(), "b")
	ownA := a.Owner("room/1", true)
	waitFor(t, 2*time.Second, "a holds room/1", func() bool { _, mine := ownA.Current(); return mine })
	ownB := b.Owner("room/1", true)
	waitFor(t, 2*time.Second, "b sees a's lease", func() bool { l, _ := ownB.Current(); return l.Holder == "a" })

	var refusals atomic.Int32
	refusals.Store(2)
	a.Handle("/test/owner", func(context.Context, string, json.RawMessage) (any, error) {
		if refusals.Add(-1) >= 0 {
			return ownerAnswer{By: "a", NotOwner: true}, nil
		}
		return ownerAnswer{By: "a"}, nil
	})
	notOwner := func(x ownerAnswer) bool { return x.NotOwner }
	local := func(node string) func(context.Context) ownerAnswer {
		return func(context.Context) ownerAnswer { return ownerAnswer{By: node + " (local)"} }
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	ans, err := cluster.AskOwner(ctx, b, ownB, "/test/owner", map[string]int{"x": 1}, local("b"), notOwner, 10*time.Millisecond)
	if err != nil || ans.By != "a" || refusals.Load() >= 0 {
		t.Fatalf("b asked the owner: %+v, %v (refusals left %d)", ans, err, refusals.Load())
	}
	if ans, err := cluster.AskOwner(ctx, a, ownA, "/test/owner", nil, local("a"), notOwner, 10*time.Millisecond); err != nil || ans.By != "a (local)" {
		t.Fatalf("the owner asked itself: %+v, %v", ans, err)
	}

	short, cancelShort := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancelShort()
	ownNone := b.Owner("room/2", false) // nobody takes it
	if _, err := cluster.AskOwner(short, b, ownNone, "/test/owner", nil, local("b"), notOwner, 10*time.Millisecond); err == nil {
		t.Fatal("a lease nobody holds answered")
	}
}

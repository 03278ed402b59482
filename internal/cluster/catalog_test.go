package cluster_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/cluster"
	"github.com/strata-rtc/strata/internal/cluster/redistest"
)

// catalogView is what a catalog's callbacks left: node/id → item.
type catalogView struct {
	mu    sync.Mutex
	items map[string]string
}

func newCatalogView() *catalogView { return &catalogView{items: map[string]string{}} }

func (v *catalogView) events() cluster.CatalogEvents {
	return cluster.CatalogEvents{
		Put: func(node, id string, item json.RawMessage) error {
			if string(item) == `"unusable"` {
				return errors.New("an item the user cannot take")
			}
			v.mu.Lock()
			v.items[node+"/"+id] = string(item)
			v.mu.Unlock()
			return nil
		},
		Delete: func(node, id string) {
			v.mu.Lock()
			delete(v.items, node+"/"+id)
			v.mu.Unlock()
		},
	}
}

func (v *catalogView) get(key string) (string, bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	it, ok := v.items[key]
	return it, ok
}

func (v *catalogView) len() int {
	v.mu.Lock()
	defer v.mu.Unlock()
	return len(v.items)
}

// TestCatalog: an item put before the other node started is read from the list, later puts and
// deletes are announced, malformed announcements are dropped, a lost delete is repaired by the
// periodic reading, and a node that is gone (its record lapsed: a crash) takes its items with it.
func TestCatalog(t *testing.T) {
	srv := redistest.Start(t)
	n1 := startNode(t, srv.Addr(), "n1")
	n2 := startNode(t, srv.Addr(), "n2")
	waitFor(t, 2*time.Second, "the nodes see each other", func() bool { return len(n1.Nodes()) == 2 && len(n2.Nodes()) == 2 })
	ctx := context.Background()
	v1, v2 := newCatalogView(), newCatalogView()
	c1 := cluster.NewCatalog(n1, "things", v1.events(), 200*time.Millisecond, nil)
	c1.Start()
	defer c1.Close()
	if err := c1.Put(ctx, "a", map[string]int{"v": 1}); err != nil {
		t.Fatal(err)
	}
	c2 := cluster.NewCatalog(n2, "things", v2.events(), 200*time.Millisecond, nil)
	c2.Start()
	defer c2.Close()
	waitFor(t, 2*time.Second, "n2 reads n1's item", func() bool { _, ok := v2.get("n1/a"); return ok })
	if err := c1.Put(ctx, "b", map[string]int{"v": 2}); err != nil {
		t.Fatal(err)
	}
	if err := c1.Put(ctx, "a", map[string]int{"v": 3}); err != nil {
		t.Fatal(err)
	}
	if err := c2.Put(ctx, "z", "theirs"); err != nil {
		t.Fatal(err)
	}
	if err := c1.Put(ctx, "b", "unusable"); err != nil { // refused by n2's user: n2 keeps b as it was
		t.Fatal(err)
	}
	waitFor(t, 2*time.Second, "the puts", func() bool {
		a, _ := v2.get("n1/a")
		_, b := v2.get("n1/b")
		_, z := v1.get("n2/z")
		return a == `{"v":3}` && b && z
	})
	if err := c1.Put(ctx, "b", map[string]int{"v": 4}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 2*time.Second, "b usable again", func() bool { b, _ := v2.get("n1/b"); return b == `{"v":4}` })
	if err := c1.Delete(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 2*time.Second, "the delete", func() bool { _, ok := v2.get("n1/a"); return !ok })

	// Malformed announcements, and a delete of an item n1 still holds (as if announced wrongly):
	// the first are dropped, the second is undone by the next reading of n1's list.
	topic := n1.Topic("catalog/things")
	for _, bad := range []struct {
		kind string
		body any
	}{{"put", map[string]any{"id": "c"}}, {"put", map[string]any{"id": "", "item": 1}}, {"rename", map[string]any{"id": "b"}}, {"put", []int{1}}} {
		if err := topic.Publish(ctx, bad.kind, 0, bad.body); err != nil {
			t.Fatal(err)
		}
	}
	if err := topic.Publish(ctx, "delete", 0, map[string]any{"id": "b"}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 2*time.Second, "the wrong delete", func() bool { _, ok := v2.get("n1/b"); return !ok })
	waitFor(t, 2*time.Second, "the list read again", func() bool { _, ok := v2.get("n1/b"); return ok })
	if _, ok := v2.get("n1/c"); ok || v2.len() != 1 {
		t.Errorf("n2's catalog after the malformed announcements has %d items", v2.len())
	}

	n1.Halt()
	waitFor(t, 3*time.Second, "n1's items gone with it", func() bool { return v2.len() == 0 })
}

// FuzzDecodeCatalogEvent: any announcement is an item (with a bounded id) or an error, never a
// panic.
func FuzzDecodeCatalogEvent(f *testing.F) {
	for _, seed := range []struct{ kind, body string }{
		{"put", `{"id":"1","item":{"x":1}}`}, {"delete", `{"id":"1"}`}, {"put", `{"id":"1"}`},
		{"put", `{"id":"","item":1}`}, {"x", `{}`}, {"put", `[`},
	} {
		f.Add(seed.kind, []byte(seed.body))
	}
	f.Fuzz(func(t *testing.T, kind string, body []byte) {
		id, item, err := cluster.DecodeCatalogEvent(kind, body)
		if err != nil {
			return
		}
		if id == "" || len(id) > 256 || kind == "put" && len(item) == 0 {
			t.Fatalf("accepted %s %q as id %q item %q", kind, body, id, item)
		}
	})
}

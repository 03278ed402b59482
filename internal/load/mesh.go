package load

import (
	"context"
	"fmt"
	"sync"

	"github.com/strata-rtc/strata/internal/load/client"
)

// mesh makes publishers receive each other, as conference participants do: a newcomer subscribes
// to everyone already there, and everyone already there adds the newcomer to their subscription
// (a renegotiation). Newcomers are handled one at a time, so nobody misses anybody.
type mesh struct {
	r       *run
	mu      sync.Mutex
	members []*member
}

type member struct {
	pub   *client.Publisher
	sub   *client.Subscriber // nil until there is someone to receive
	feeds int
}

func newMesh(r *run) *mesh { return &mesh{r: r} }

// joined adds a publisher that has just started publishing.
func (m *mesh) joined(ctx context.Context, p *client.Publisher) {
	m.mu.Lock()
	defer m.mu.Unlock()
	me := &member{pub: p}
	var feeds []uint64
	for _, o := range m.members {
		feeds = append(feeds, o.pub.ID)
	}
	var wg sync.WaitGroup
	if len(feeds) > 0 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m.subscribe(ctx, me, feeds)
		}()
	}
	for _, o := range m.members {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m.subscribe(ctx, o, []uint64{p.ID})
		}()
	}
	wg.Wait()
	m.members = append(m.members, me)
}

// subscribe makes member x receive feeds: its first subscription, or an addition to it.
func (m *mesh) subscribe(ctx context.Context, x *member, feeds []uint64) {
	r := m.r
	if x.sub == nil {
		sub, err := client.JoinSubscriber(ctx, r.env, r.nextSubscription(), x.pub, feeds)
		if err != nil {
			r.fail(fmt.Errorf("publisher %d receiving the others: %w", x.pub.Index, err))
			return
		}
		x.sub, x.feeds = sub, len(feeds)
		r.addSubscription(sub, x.feeds*r.kinds())
		return
	}
	if err := x.sub.Add(ctx, feeds); err != nil {
		r.addErr(fmt.Errorf("publisher %d adding feeds: %w", x.pub.Index, err))
		return
	}
	x.feeds += len(feeds)
	r.setExpected(x.sub, x.feeds*r.kinds())
}

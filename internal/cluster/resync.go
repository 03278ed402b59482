package cluster

import (
	"context"
	"time"
)

// SubscriptionSettle is how long after a Topic.Subscribe a list read from the other nodes is
// read again: a subscription is established asynchronously (Redis confirms it later), so an
// announcement made between a first reading and the subscription's start is lost without a gap,
// and only a second reading catches it.
const SubscriptionSettle = 500 * time.Millisecond

// AfterSettle calls read once the subscription made just before has settled, unless ctx ends
// first: a second reading of what the first one, made at once, may have missed.
func AfterSettle(ctx context.Context, read func()) {
	select {
	case <-ctx.Done():
	case <-time.After(SubscriptionSettle):
		read()
	}
}

// DefaultResync is how often a node reads the others' lists again (ResyncLoop) by default.
const DefaultResync = 10 * time.Second

// ResyncLoop calls read once the subscription made just before has settled (SubscriptionSettle,
// or period if shorter), then every period, until ctx ends: what a node keeps of the others'
// announcements (rooms, mountpoints) is repaired even when an announcement was lost with no gap
// to show it.
func ResyncLoop(ctx context.Context, period time.Duration, read func()) {
	wait := min(SubscriptionSettle, period)
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		read()
		wait = period
	}
}

package load

import (
	"context"
	"fmt"
	"net/url"

	"github.com/strata-rtc/strata/internal/load/client"
)

// prepareMountpoint checks the streaming mountpoint exists, or creates it (an rtp mountpoint on
// ports the server picks) and starts feeding it plain RTP from the server's host.
func (r *run) prepareMountpoint(ctx context.Context, admin *client.Admin) error {
	id := r.plan.Room
	exists, err := admin.MountpointExists(ctx, id)
	if err != nil {
		return fmt.Errorf("mountpoint %d: %w", id, err)
	}
	switch {
	case exists && r.plan.CreateRoom:
		return fmt.Errorf("mountpoint %d already exists; choose another --room or drop --create-room", id)
	case !exists && !r.plan.CreateRoom:
		return fmt.Errorf("mountpoint %d does not exist on %s (create it, or pass --create-room)", id, r.plan.Server)
	case exists:
		return nil // someone else feeds it
	}
	u, err := url.Parse(r.plan.Server)
	if err != nil {
		return err
	}
	target, err := admin.CreateMountpoint(ctx, id, r.plan.Video(), u.Hostname())
	if err != nil {
		return fmt.Errorf("creating mountpoint %d: %w", id, err)
	}
	feed, err := client.StartFeed(r.env, target)
	if err != nil {
		_ = admin.DestroyMountpoint(ctx, id)
		return err
	}
	r.mu.Lock()
	r.feed = feed
	r.mu.Unlock()
	return nil
}

// feedOf is the run's feed, or nil.
func (r *run) feedOf() *client.Feed {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.feed
}

// closeFeed stops the feed (after the viewers have left).
func (r *run) closeFeed() {
	if f := r.feedOf(); f != nil {
		f.Close()
	}
}

func (r *run) joinViewer(ctx context.Context) {
	v, err := client.JoinViewer(ctx, r.env, r.nextSubscription(), r.plan.Room)
	if err != nil {
		r.fail(err)
		return
	}
	r.addSubscription(v, r.kinds())
}

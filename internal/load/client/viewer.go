package client

import (
	"context"
	"fmt"
)

// StreamingPlugin is the streaming plugin's package name.
const StreamingPlugin = "janus.plugin.streaming"

// JoinViewer watches a streaming mountpoint as Janus's streaming demo does (watch; the plugin
// offers every stream of the mountpoint; start with the answer) and waits until the
// PeerConnection is up. A viewer is a Subscriber whose streams come from the offer, so it counts
// and checks what it receives exactly as a videoroom subscriber does; its feed ids are 0.
func JoinViewer(ctx context.Context, env *Env, index int, mountpoint uint64) (*Subscriber, error) {
	ctx, cancel := context.WithTimeout(ctx, env.JoinTimeout)
	defer cancel()
	v := newSubscriber(env, index)
	v.start, v.fromOffer = map[string]any{"request": "start"}, true
	if err := v.watch(ctx, mountpoint); err != nil {
		v.Close(context.Background())
		return nil, fmt.Errorf("viewer %d: %w", index, err)
	}
	return v, nil
}

func (v *Subscriber) watch(ctx context.Context, mountpoint uint64) error {
	var err error
	if v.c, err = v.env.Dial(ctx); err != nil {
		return err
	}
	if v.s, err = v.c.Create(ctx); err != nil {
		return err
	}
	if v.h, err = v.s.Attach(ctx, StreamingPlugin); err != nil {
		return err
	}
	states, err := v.newPC()
	if err != nil {
		return err
	}
	v.neg.Lock()
	err = v.negotiate(ctx, map[string]any{"request": "watch", "id": mountpoint})
	v.neg.Unlock()
	if err != nil {
		return err
	}
	if err := waitConnected(ctx, states); err != nil {
		return err
	}
	v.wg.Add(1)
	go v.serverOffers() // ICE restarts and the plugin's status events
	return nil
}

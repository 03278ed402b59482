package cluster

import (
	"context"
	"fmt"
	"time"
)

// AskOwner sends req to the node that holds own's lease (a room's owner) and returns its answer:
// local serves it when this node holds the lease and reaches the engine, v.Call at path
// otherwise. It asks again every retry (a lease with no holder yet, an owner that died or lost
// the lease: notOwner(answer)) until an owner answers or ctx ends. The plugins' owner protocols
// (audiobridge, videoroom) go through it so that the rules of who serves are the same.
func AskOwner[A any](ctx context.Context, v View, own Ownership, path string, req any,
	local func(context.Context) A, notOwner func(A) bool, retry time.Duration) (A, error) {
	var last error
	for {
		l, mine := own.Current()
		switch {
		case mine && v.Connected():
			if ans := local(ctx); !notOwner(ans) {
				return ans, nil
			}
		case l.Holder != "" && l.Holder != v.Self().ID:
			var ans A
			err := v.Call(ctx, l.Holder, path, req, &ans)
			if err == nil && !notOwner(ans) {
				return ans, nil
			}
			last = err
		}
		select {
		case <-time.After(retry):
		case <-ctx.Done():
			var zero A
			if last != nil {
				return zero, fmt.Errorf("cluster: %s: no owner of %s answered: %w (last: %v)", path, l.Name, ctx.Err(), last)
			}
			return zero, fmt.Errorf("cluster: %s: no owner of %s answered: %w", path, l.Name, ctx.Err())
		}
	}
}

// CallOthers sends req to path on every other live node, one after the other, each call bounded
// by timeout, and hands f each node's answer or error: what a plugin asks of the whole cluster
// (the rooms the others know, a kick of every viewer).
func CallOthers[A any](ctx context.Context, v View, path string, req any, timeout time.Duration, f func(node string, ans A, err error)) {
	self := v.Self().ID
	for _, n := range v.Nodes() {
		if n.ID == self {
			continue
		}
		cctx, cancel := context.WithTimeout(ctx, timeout)
		var ans A
		err := v.Call(cctx, n.ID, path, req, &ans)
		cancel()
		f(n.ID, ans, err)
	}
}

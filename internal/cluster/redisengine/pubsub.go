package redisengine

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/strata-rtc/strata/internal/cluster"
)

// Shared values: "<p>:kv:<key>".

// Put stores value under key (ttl 0: until deleted).
func (e *Engine) Put(ctx context.Context, key string, value []byte, ttl time.Duration) error {
	ctx, cancel := e.ctx(ctx)
	defer cancel()
	return wrap("put "+key, e.client.Set(ctx, e.key("kv", key), value, ttl).Err())
}

// Get returns the value under key.
func (e *Engine) Get(ctx context.Context, key string) ([]byte, bool, error) {
	ctx, cancel := e.ctx(ctx)
	defer cancel()
	b, err := e.client.Get(ctx, e.key("kv", key)).Bytes()
	if err == redis.Nil {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, wrap("get "+key, err)
	}
	return b, true, nil
}

// Delete removes key.
func (e *Engine) Delete(ctx context.Context, key string) error {
	ctx, cancel := e.ctx(ctx)
	defer cancel()
	return wrap("delete "+key, e.client.Del(ctx, e.key("kv", key)).Err())
}

// Publish sends payload on "<p>:<channel>".
func (e *Engine) Publish(ctx context.Context, channel string, payload []byte) error {
	ctx, cancel := e.ctx(ctx)
	defer cancel()
	return wrap("publish "+channel, e.client.Publish(ctx, e.prefix+channel, payload).Err())
}

// Subscribe listens on "<p>:<channel>" for each channel. go-redis re-subscribes on its own after
// a lost connection; the subscription notices it by the server confirming a channel a second time
// and reports it on Reconnected.
func (e *Engine) Subscribe(ctx context.Context, channels ...string) (cluster.Subscription, error) {
	if len(channels) == 0 {
		return nil, errors.New("redisengine: subscribe to no channel")
	}
	full := make([]string, len(channels))
	for i, c := range channels {
		full[i] = e.prefix + c
	}
	ps := e.client.Subscribe(context.Background())
	sctx, cancel := e.ctx(ctx)
	err := ps.Subscribe(sctx, full...)
	cancel()
	if err != nil {
		_ = ps.Close()
		return nil, wrap("subscribe", err)
	}
	s := &subscription{
		ps:          ps,
		timeout:     e.timeout,
		prefix:      e.prefix,
		msgs:        make(chan cluster.Message, 256),
		reconnected: make(chan struct{}, 1),
		done:        make(chan struct{}),
	}
	// The health check pings an idle connection this often, so that a server that went away
	// without closing the connection is noticed within a few seconds.
	in := ps.ChannelWithSubscriptions(redis.WithChannelHealthCheckInterval(time.Second),
		redis.WithChannelPingTimeout(e.timeout), redis.WithChannelReconnectTimeout(e.timeout))
	go s.run(in)
	return s, nil
}

type subscription struct {
	ps          *redis.PubSub
	timeout     time.Duration
	prefix      string
	msgs        chan cluster.Message
	reconnected chan struct{}
	done        chan struct{}
	closeOnce   sync.Once
}

func (s *subscription) Messages() <-chan cluster.Message { return s.msgs }
func (s *subscription) Reconnected() <-chan struct{}     { return s.reconnected }

// Add listens on more channels. go-redis keeps them even when Redis cannot be reached, and
// subscribes to them with the others when it reconnects.
func (s *subscription) Add(ctx context.Context, channels ...string) error {
	if len(channels) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	return wrap("subscribe", s.ps.Subscribe(ctx, s.full(channels)...))
}

// Remove stops listening on channels.
func (s *subscription) Remove(ctx context.Context, channels ...string) error {
	if len(channels) == 0 {
		return nil // go-redis would unsubscribe from every channel
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	return wrap("unsubscribe", s.ps.Unsubscribe(ctx, s.full(channels)...))
}

func (s *subscription) full(channels []string) []string {
	full := make([]string, len(channels))
	for i, c := range channels {
		full[i] = s.prefix + c
	}
	return full
}

func (s *subscription) Close() error {
	var err error
	s.closeOnce.Do(func() {
		close(s.done)
		err = s.ps.Close()
	})
	return err
}

func (s *subscription) run(in <-chan any) {
	defer close(s.msgs)
	confirmed := make(map[string]bool)
	for {
		var m any
		var ok bool
		select {
		case m, ok = <-in:
			if !ok {
				return
			}
		case <-s.done:
			return
		}
		switch m := m.(type) {
		case *redis.Subscription:
			if m.Kind == "unsubscribe" {
				delete(confirmed, m.Channel)
				continue
			}
			if m.Kind != "subscribe" {
				continue
			}
			// The first confirmation of a channel answers our SUBSCRIBE; another one means go-redis
			// dialled again and re-subscribed: whatever was published in between is lost.
			if confirmed[m.Channel] {
				clear(confirmed)
				select {
				case s.reconnected <- struct{}{}:
				default:
				}
			}
			confirmed[m.Channel] = true
		case *redis.Message:
			msg := cluster.Message{Channel: strings.TrimPrefix(m.Channel, s.prefix), Payload: []byte(m.Payload)}
			select {
			case s.msgs <- msg:
			case <-s.done:
				return
			}
		}
	}
}

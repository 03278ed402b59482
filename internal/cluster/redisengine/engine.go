// Package redisengine is the cluster's Engine on Redis (go-redis): node records and slots as keys
// that lapse unless refreshed, leases with fencing epochs kept by Lua scripts (atomic on the
// server), shared values, and publish/subscribe. Every key and channel carries the cluster's name
// as prefix, so that several clusters can share one Redis.
package redisengine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/strata-rtc/strata/internal/cluster"
)

// DefaultTimeout bounds every request to Redis: a node must notice quickly that Redis is gone
// (its heartbeat runs every second) rather than hang on a dead connection.
const DefaultTimeout = 500 * time.Millisecond

// Options say where Redis is and how the cluster's keys are named.
type Options struct {
	Address  string
	Password string
	DB       int
	// Prefix is the cluster's name: every key and channel is "<Prefix>:...".
	Prefix string
	// Timeout bounds dialling, reading and writing (DefaultTimeout if zero).
	Timeout time.Duration
}

// Engine implements cluster.Engine on one Redis server.
type Engine struct {
	client  *redis.Client
	prefix  string
	timeout time.Duration

	mu sync.Mutex
	// lastSlot remembers the slot each node of this process last held: after a Redis restart
	// forgot every slot, the node claims the same one again so that its session ids still point
	// to it.
	lastSlot map[string]int
}

var _ cluster.Engine = (*Engine)(nil)

// New returns an Engine for o; it connects lazily (the first request dials).
func New(o Options) (*Engine, error) {
	if o.Address == "" {
		return nil, errors.New("redisengine: no address")
	}
	if o.Prefix == "" {
		return nil, errors.New("redisengine: no prefix (the cluster's name)")
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	client := redis.NewClient(&redis.Options{
		Addr:         o.Address,
		Password:     o.Password,
		DB:           o.DB,
		DialTimeout:  o.Timeout,
		ReadTimeout:  o.Timeout,
		WriteTimeout: o.Timeout,
		PoolTimeout:  o.Timeout,
		// One attempt: the callers retry on their own period (the heartbeat), and a retry loop
		// here would only make a dead server take longer to report.
		MaxRetries:            -1,
		ContextTimeoutEnabled: true,
		Protocol:              2,
		DisableIdentity:       true,
	})
	return &Engine{client: client, prefix: o.Prefix + ":", timeout: o.Timeout, lastSlot: make(map[string]int)}, nil
}

// Close closes the connections.
func (e *Engine) Close() error { return e.client.Close() }

func (e *Engine) key(parts ...string) string {
	k := e.prefix
	for i, p := range parts {
		if i > 0 {
			k += ":"
		}
		k += p
	}
	return k
}

// ctx bounds a request by the engine's timeout even when the caller gave none.
func (e *Engine) ctx(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, e.timeout)
}

// wrap makes every failure that is not Redis answering (a refused connection, a timeout, a closed
// client) an ErrUnavailable, which the Node treats as "cut off".
func wrap(op string, err error) error {
	if err == nil || errors.Is(err, redis.Nil) {
		return err
	}
	var rerr redis.Error
	if errors.As(err, &rerr) {
		return fmt.Errorf("redisengine: %s: %w", op, err)
	}
	return fmt.Errorf("redisengine: %s: %w: %w", op, cluster.ErrUnavailable, err)
}

// Ping checks that Redis answers.
func (e *Engine) Ping(ctx context.Context) error {
	ctx, cancel := e.ctx(ctx)
	defer cancel()
	return wrap("ping", e.client.Ping(ctx).Err())
}

// Node records: "<p>:node:<id>" holds the record's JSON and lapses after its ttl; the set
// "<p>:nodes" indexes the ids so that listing needs no SCAN over a shared Redis. The scripts keep
// the two together: a record written is indexed, an id whose record lapsed is dropped when listed.
var (
	putNodeScript = redis.NewScript(`
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
redis.call('SADD', KEYS[2], ARGV[3])
return 1`)
	listNodesScript = redis.NewScript(`
local out = {}
for _, id in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  local v = redis.call('GET', ARGV[1] .. id)
  if v then table.insert(out, v) else redis.call('SREM', KEYS[1], id) end
end
return out`)
)

// PutNode writes rec, lapsing after ttl.
func (e *Engine) PutNode(ctx context.Context, rec cluster.NodeRecord, ttl time.Duration) error {
	if rec.ID == "" {
		return errors.New("redisengine: node record without id")
	}
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	ctx, cancel := e.ctx(ctx)
	defer cancel()
	err = putNodeScript.Run(ctx, e.client, []string{e.key("node", rec.ID), e.key("nodes")},
		b, ttl.Milliseconds(), rec.ID).Err()
	return wrap("put node", err)
}

// DeleteNode removes a node's record at once (a node that stops cleanly).
func (e *Engine) DeleteNode(ctx context.Context, id string) error {
	ctx, cancel := e.ctx(ctx)
	defer cancel()
	_, err := e.client.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Del(ctx, e.key("node", id))
		p.SRem(ctx, e.key("nodes"), id)
		return nil
	})
	return wrap("delete node", err)
}

// Nodes lists the live records. A record that does not decode is skipped: it is remote input
// (another node, or anyone with access to Redis), and one bad record must not hide the others.
func (e *Engine) Nodes(ctx context.Context) ([]cluster.NodeRecord, error) {
	ctx, cancel := e.ctx(ctx)
	defer cancel()
	vals, err := listNodesScript.Run(ctx, e.client, []string{e.key("nodes")}, e.key("node")+":").StringSlice()
	if err != nil {
		return nil, wrap("list nodes", err)
	}
	out := make([]cluster.NodeRecord, 0, len(vals))
	for _, v := range vals {
		var rec cluster.NodeRecord
		if json.Unmarshal([]byte(v), &rec) != nil || rec.ID == "" {
			continue
		}
		out = append(out, rec)
	}
	return out, nil
}

// Slots: "<p>:slot:<n>" holds the id of the node that has slot n, lapsing after its ttl.
var (
	// claimSlotScript prefers ARGV[3] (the slot the node held before), then a slot it still holds,
	// then the first free one; 0 when all are taken.
	claimSlotScript = redis.NewScript(`
local node, ttl, pref, max = ARGV[1], ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4])
local function take(n)
  redis.call('SET', KEYS[1] .. n, node, 'PX', ttl)
  return n
end
if pref >= 1 and pref <= max then
  local v = redis.call('GET', KEYS[1] .. pref)
  if not v or v == node then return take(pref) end
end
local free = 0
for n = 1, max do
  local v = redis.call('GET', KEYS[1] .. n)
  if v == node then return take(n) end
  if not v and free == 0 then free = n end
end
if free > 0 then return take(free) end
return 0`)
	// renewSlotScript extends the node's slot, or takes it again if it lapsed (or Redis restarted)
	// and nobody else took it; 0 when another node has it.
	renewSlotScript = redis.NewScript(`
local v = redis.call('GET', KEYS[1])
if v and v ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1`)
)

// ErrNoSlot is returned when every slot is taken.
var ErrNoSlot = errors.New("redisengine: every node slot is taken")

// ClaimSlot gives node a slot: the one it had, or a free one.
func (e *Engine) ClaimSlot(ctx context.Context, node string, ttl time.Duration) (int, error) {
	e.mu.Lock()
	pref := e.lastSlot[node]
	e.mu.Unlock()
	ctx, cancel := e.ctx(ctx)
	defer cancel()
	n, err := claimSlotScript.Run(ctx, e.client, []string{e.key("slot") + ":"},
		node, ttl.Milliseconds(), pref, cluster.MaxSlot).Int()
	if err != nil {
		return 0, wrap("claim slot", err)
	}
	if n == 0 {
		return 0, ErrNoSlot
	}
	e.mu.Lock()
	e.lastSlot[node] = n
	e.mu.Unlock()
	return n, nil
}

// RenewSlot extends node's slot; it fails when another node holds it.
func (e *Engine) RenewSlot(ctx context.Context, node string, slot int, ttl time.Duration) error {
	ctx, cancel := e.ctx(ctx)
	defer cancel()
	ok, err := renewSlotScript.Run(ctx, e.client, []string{e.key("slot", strconv.Itoa(slot))},
		node, ttl.Milliseconds()).Int()
	if err != nil {
		return wrap("renew slot", err)
	}
	if ok == 0 {
		return fmt.Errorf("redisengine: slot %d of node %s is held by another node", slot, node)
	}
	return nil
}

var releaseSlotScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 1`)

// ReleaseSlot frees node's slot if it still holds it.
func (e *Engine) ReleaseSlot(ctx context.Context, node string, slot int) error {
	ctx, cancel := e.ctx(ctx)
	defer cancel()
	err := releaseSlotScript.Run(ctx, e.client, []string{e.key("slot", strconv.Itoa(slot))}, node).Err()
	return wrap("release slot", err)
}

package redisengine

import (
	"context"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/strata-rtc/strata/internal/cluster"
)

// Leases: "<p>:lease:<name>" is a hash {holder, epoch} lapsing after the lease's ttl;
// "<p>:epoch:<name>" is the last epoch given for name, kept after the lease lapses so that the next
// holder's epoch is larger (it lapses after epochKeep without any acquisition, a room long gone).
// A restarted Redis forgets both: the acquirer passes the largest epoch it has seen as minEpoch.
const epochKeep = 7 * 24 * time.Hour

var (
	// acquireScript returns {holder, epoch, acquired}.
	acquireScript = redis.NewScript(`
local cur = redis.call('HMGET', KEYS[1], 'holder', 'epoch')
if cur[1] then
  if cur[1] == ARGV[1] then
    redis.call('PEXPIRE', KEYS[1], ARGV[3])
    return {cur[1], cur[2], 1}
  end
  return {cur[1], cur[2], 0}
end
local last = tonumber(redis.call('GET', KEYS[2]) or '0')
local min = tonumber(ARGV[2])
if min > last then last = min end
local epoch = string.format('%d', last + 1)
redis.call('SET', KEYS[2], epoch, 'PX', ARGV[4])
redis.call('HSET', KEYS[1], 'holder', ARGV[1], 'epoch', epoch)
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return {ARGV[1], epoch, 1}`)
	// renewScript and releaseScript act only when holder and epoch both match: a holder that lost
	// the lease (it lapsed and another node took it) cannot extend or drop the new holder's.
	renewScript = redis.NewScript(`
local cur = redis.call('HMGET', KEYS[1], 'holder', 'epoch')
if cur[1] == ARGV[1] and cur[2] == ARGV[2] then
  redis.call('PEXPIRE', KEYS[1], ARGV[3])
  return 1
end
return 0`)
	releaseScript = redis.NewScript(`
local cur = redis.call('HMGET', KEYS[1], 'holder', 'epoch')
if cur[1] == ARGV[1] and cur[2] == ARGV[2] then
  redis.call('DEL', KEYS[1])
  return 1
end
return 0`)
)

// Acquire takes the lease on name for holder if nobody holds it.
func (e *Engine) Acquire(ctx context.Context, name, holder string, minEpoch uint64, ttl time.Duration) (cluster.Lease, bool, error) {
	ctx, cancel := e.ctx(ctx)
	defer cancel()
	res, err := acquireScript.Run(ctx, e.client, []string{e.key("lease", name), e.key("epoch", name)},
		holder, strconv.FormatUint(minEpoch, 10), ttl.Milliseconds(), epochKeep.Milliseconds()).Slice()
	if err != nil {
		return cluster.Lease{}, false, wrap("acquire "+name, err)
	}
	l, ok := leaseOf(name, res)
	if !ok {
		return cluster.Lease{}, false, wrap("acquire "+name, errMalformedLease)
	}
	acquired, _ := res[2].(int64)
	return l, acquired == 1, nil
}

// Renew extends l if still held at its epoch.
func (e *Engine) Renew(ctx context.Context, l cluster.Lease, ttl time.Duration) (bool, error) {
	ctx, cancel := e.ctx(ctx)
	defer cancel()
	n, err := renewScript.Run(ctx, e.client, []string{e.key("lease", l.Name)},
		l.Holder, strconv.FormatUint(l.Epoch, 10), ttl.Milliseconds()).Int()
	if err != nil {
		return false, wrap("renew "+l.Name, err)
	}
	return n == 1, nil
}

// Release drops l if still held at its epoch.
func (e *Engine) Release(ctx context.Context, l cluster.Lease) error {
	ctx, cancel := e.ctx(ctx)
	defer cancel()
	err := releaseScript.Run(ctx, e.client, []string{e.key("lease", l.Name)},
		l.Holder, strconv.FormatUint(l.Epoch, 10)).Err()
	return wrap("release "+l.Name, err)
}

// Holder returns the current lease of name.
func (e *Engine) Holder(ctx context.Context, name string) (cluster.Lease, bool, error) {
	ctx, cancel := e.ctx(ctx)
	defer cancel()
	res, err := e.client.HMGet(ctx, e.key("lease", name), "holder", "epoch").Result()
	if err != nil {
		return cluster.Lease{}, false, wrap("holder "+name, err)
	}
	if res[0] == nil {
		return cluster.Lease{}, false, nil
	}
	l, ok := leaseOf(name, res)
	if !ok {
		return cluster.Lease{}, false, wrap("holder "+name, errMalformedLease)
	}
	return l, true, nil
}

type leaseError string

func (e leaseError) Error() string { return string(e) }

// RedisError marks it as Redis's answer (a key that is not a lease), not an unreachable server.
func (e leaseError) RedisError() {}

const errMalformedLease = leaseError("malformed lease in Redis")

func leaseOf(name string, res []any) (cluster.Lease, bool) {
	if len(res) < 2 {
		return cluster.Lease{}, false
	}
	holder, ok1 := res[0].(string)
	epochS, ok2 := res[1].(string)
	epoch, err := strconv.ParseUint(epochS, 10, 64)
	if !ok1 || !ok2 || err != nil {
		return cluster.Lease{}, false
	}
	return cluster.Lease{Name: name, Holder: holder, Epoch: epoch}, true
}

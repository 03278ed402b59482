package sfuflow

import (
	"context"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/strata-rtc/strata/internal/ovs"
)

// switchDropInterval is how often the switch's drop flows are read.
const switchDropInterval = 500 * time.Millisecond

// dropKey is what a drop flow of the controller's drops: packets to a subscriber's address with a
// layer's mark.
type dropKey struct {
	dst  netip.Addr
	dscp uint8
}

// switchDrops counts the packets the switch at the SFU dropped on the controller's rules, per
// subscriber address and mark: what the simulator reports as a layer's switch_dropped (a
// decision, not a loss). The counters live in the switch's drop flows, which the controller
// replaces as its decisions change (and a clean stop removes), so they are read every
// switchDropInterval and summed: a flow's packets after its last read before it went away are
// not counted.
type switchDrops struct {
	client *ovs.Client

	mu    sync.Mutex
	last  map[uint64]uint64 // per flow cookie, its packets at the last read
	total map[dropKey]int64
}

func newSwitchDrops(target string) *switchDrops {
	return &switchDrops{client: ovs.NewClient(target), last: map[uint64]uint64{}, total: map[dropKey]int64{}}
}

// poll reads the switch's flows once (an unreachable switch counts nothing this time).
func (d *switchDrops) poll(ctx context.Context) {
	flows, err := d.client.DumpFlows(ctx)
	if err == nil {
		d.add(flows)
	}
}

// add takes one dump of the switch's flows: each drop flow's packets since the last dump (all of
// them for a flow new since then, or one whose counter went back, put there anew). Every flow's
// count is kept, pass flows' too: a layer's flow that turns from pass to drop keeps its cookie
// and, replaced in place, its counter, so only its growth since it last passed counts.
func (d *switchDrops) add(flows []ovs.Flow) {
	d.mu.Lock()
	defer d.mu.Unlock()
	seen := make(map[uint64]uint64, len(flows))
	for _, f := range flows {
		seen[f.Cookie] = f.Packets
		k, ok := dropFlowKey(f)
		if !ok {
			continue
		}
		n := f.Packets
		if prev, ok := d.last[f.Cookie]; ok && n >= prev {
			n -= prev
		}
		d.total[k] += int64(n)
	}
	d.last = seen
}

// dropped is what the switch dropped of packets to dst marked dscp.
func (d *switchDrops) dropped(dst netip.Addr, dscp uint8) int64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.total[dropKey{dst: dst, dscp: dscp}]
}

// dropFlowKey reads a drop flow's destination address and mark from its match as dump-flows
// prints it (nw_dst or ipv6_dst, and nw_tos = DSCP << 2).
func dropFlowKey(f ovs.Flow) (dropKey, bool) {
	if f.Actions != "drop" {
		return dropKey{}, false
	}
	var k dropKey
	tos := -1
	for _, item := range strings.Split(f.Match, ",") {
		name, v, _ := strings.Cut(strings.TrimSpace(item), "=")
		switch name {
		case "nw_dst", "ipv6_dst":
			if a, err := netip.ParseAddr(v); err == nil {
				k.dst = a.Unmap()
			}
		case "nw_tos":
			if n, err := strconv.Atoi(v); err == nil && n >= 0 && n < 256 {
				tos = n
			}
		}
	}
	if !k.dst.IsValid() || tos < 0 {
		return dropKey{}, false
	}
	k.dscp = uint8(tos >> 2)
	return k, true
}

// watchSwitch reads the switch's drop flows until ctx ends.
func (s *Sessions) watchSwitch(ctx context.Context) {
	defer s.wg.Done()
	t := time.NewTicker(switchDropInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			s.drops.poll(ctx)
		}
	}
}

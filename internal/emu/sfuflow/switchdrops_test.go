package sfuflow

import (
	"net/netip"
	"strconv"
	"testing"

	"github.com/strata-rtc/strata/internal/ovs"
)

// The switch's drops are summed over its drop flows' dumps: growth of a flow seen before, all of a
// new one or of one whose counter went back (put there anew), of one that passed before only what
// came since; pass flows and unparsable matches count nothing.
func TestSwitchDropsSummedOverDumps(t *testing.T) {
	drop := func(cookie, pkts uint64, dst string, tos int) ovs.Flow {
		return ovs.Flow{Cookie: cookie, Actions: "drop", Packets: pkts,
			Match: "udp,nw_src=10.0.0.1,nw_dst=" + dst + ",nw_tos=" + itoa(tos) + ",tp_src=5000,tp_dst=6000"}
	}
	pass := ovs.Flow{Cookie: 9, Actions: "NORMAL", Packets: 500, Match: "udp,nw_dst=10.0.0.2,nw_tos=136"}
	d := newSwitchDrops("unix:/nonexistent")
	d.add([]ovs.Flow{drop(1, 10, "10.0.0.2", 152), pass})
	d.add([]ovs.Flow{drop(1, 25, "10.0.0.2", 152), drop(2, 4, "10.0.0.3", 152), pass})
	d.add([]ovs.Flow{drop(2, 6, "10.0.0.3", 152), {Cookie: 3, Actions: "drop", Packets: 7, Match: "udp,nw_tos=152"}})
	d.add([]ovs.Flow{drop(1, 3, "10.0.0.2", 152), drop(4, 5, "10.0.0.2", 144)}) // flow 1 back from zero
	// The DSCP 34 flow passed 100 packets, then turns to drop in place, keeping its counter.
	d.add([]ovs.Flow{{Cookie: 5, Actions: "NORMAL", Packets: 100, Match: "udp,nw_dst=10.0.0.2,nw_tos=136"}})
	d.add([]ovs.Flow{{Cookie: 5, Actions: "drop", Packets: 108, Match: "udp,nw_dst=10.0.0.2,nw_tos=136"}})
	a, b := netip.MustParseAddr("10.0.0.2"), netip.MustParseAddr("10.0.0.3")
	for _, c := range []struct {
		dst  netip.Addr
		dscp uint8
		want int64
	}{{a, 38, 28}, {b, 38, 6}, {a, 36, 5}, {a, 34, 8}} {
		if got := d.dropped(c.dst, c.dscp); got != c.want {
			t.Errorf("dropped(%v, %d) = %d, want %d", c.dst, c.dscp, got, c.want)
		}
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

func FuzzDropFlowKey(f *testing.F) {
	f.Add("udp,nw_src=10.0.0.1,nw_dst=10.0.0.2,nw_tos=152,tp_src=5000,tp_dst=6000")
	f.Add("udp6,ipv6_src=fd00::1,ipv6_dst=fd00::2,nw_tos=136")
	f.Add("nw_dst=,nw_tos=-4,,=")
	f.Fuzz(func(t *testing.T, match string) {
		k, ok := dropFlowKey(ovs.Flow{Actions: "drop", Match: match})
		if ok && (!k.dst.IsValid() || k.dscp > 63) {
			t.Fatalf("%q: %+v", match, k)
		}
	})
}

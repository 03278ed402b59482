//go:build linux

package ovs_test

import (
	"context"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/ovs"
	"github.com/strata-rtc/strata/internal/ovs/ovstest"
)

// TestSwitch runs a real Open vSwitch between two namespaces: it forwards by default, drops what
// a flow drops (by DSCP), counts it, loses the flows on Restart, and Close ends its daemons.
func TestSwitch(t *testing.T) {
	nw := ovstest.New(t, 2)
	ctx := context.Background()
	sw, c := nw.Switch, nw.Switch.Client()
	if want := "unix:" + sw.Dir() + "/br0.mgmt"; sw.MgmtTarget() != want {
		t.Errorf("MgmtTarget = %q, want %q", sw.MgmtTarget(), want)
	}
	a, b := nw.Hosts[0], nw.Hosts[1]
	tx := nw.UDP(t, 0, a.Addr, 5000)
	rx := nw.UDP(t, 1, b.Addr, 6000)
	dst := netip.AddrPortFrom(b.Addr, 6000)
	send := func(want int) map[int]int {
		t.Helper()
		for _, d := range []int{34, 38} {
			if err := ovstest.Send(tx, dst, d, 20); err != nil {
				t.Fatal(err)
			}
		}
		return ovstest.CountAtLeast(rx, want, 200*time.Millisecond)
	}
	if got := send(40); got[34] != 20 || got[38] != 20 {
		t.Fatalf("base NORMAL flow: got %v, want 20 of each", got)
	}

	flow := "cookie=0x77,priority=100,udp,nw_src=" + a.Addr.String() + ",tp_src=5000,nw_dst=" + b.Addr.String() + ",tp_dst=6000,ip_dscp=38,actions=drop"
	if err := c.ReplaceCookie(ctx, 0x77, ^uint64(0), []string{flow}); err != nil {
		t.Fatal(err)
	}
	if got := send(20); got[34] != 20 || got[38] != 0 {
		t.Fatalf("with DSCP 38 dropped: got %v", got)
	}
	// The datapath's caches report their counts to the flow table lazily (within a second or so).
	var flows []ovs.Flow
	var drop *ovs.Flow
	for deadline := time.Now().Add(3 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		var err error
		if flows, err = c.DumpFlows(ctx); err != nil {
			t.Fatal(err)
		}
		for i := range flows {
			if flows[i].Cookie == 0x77 {
				drop = &flows[i]
			}
		}
		if drop != nil && drop.Packets == 20 || time.Now().After(deadline) {
			break
		}
	}
	if len(flows) != 2 || drop == nil || drop.Packets != 20 || drop.Actions != "drop" || !strings.Contains(drop.Match, "nw_tos=152") {
		t.Fatalf("dump after drop: %+v", flows)
	}

	if err := sw.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	flows, err := c.DumpFlows(ctx)
	if err != nil || len(flows) != 1 || flows[0].Priority != 0 || flows[0].Actions != "NORMAL" {
		t.Fatalf("after Restart: %+v, %v (want only the base NORMAL flow)", flows, err)
	}
	if got := send(40); got[34] != 20 || got[38] != 20 {
		t.Fatalf("after Restart: got %v, want 20 of each", got)
	}

	if err := c.ReplaceFlows(ctx, []string{"priority=0,actions=drop"}); err != nil {
		t.Fatal(err)
	}
	if got := send(0); len(got) != 0 {
		t.Fatalf("table replaced by drop-all: got %v", got)
	}

	pids := []string{readPid(t, sw.Dir()+"/ovs-vswitchd.pid"), readPid(t, sw.Dir()+"/ovsdb-server.pid")}
	if err := sw.Close(); err != nil {
		t.Fatal(err)
	}
	for _, p := range pids {
		if _, err := os.Stat("/proc/" + p); err == nil {
			t.Errorf("process %s still runs after Close", p)
		}
	}
	_, err = c.DumpFlows(ctx)
	if err == nil || ovs.IsRefused(err) || !strings.Contains(err.Error(), "br0.mgmt") {
		t.Errorf("dump of a closed switch: %v (want an unreachable error naming the socket)", err)
	}
}

// TestRefused: the switch's OpenFlow error comes back as a refusal with ovs-ofctl's message, and
// the failed bundle changes nothing.
func TestRefused(t *testing.T) {
	nw := ovstest.New(t, 0)
	ctx := context.Background()
	c := nw.Switch.Client()
	err := c.ReplaceCookie(ctx, 1, ^uint64(0), []string{"cookie=1,priority=5,actions=drop", "cookie=1,priority=9,udp,actions=meter:7,NORMAL"})
	if !ovs.IsRefused(err) || !strings.Contains(err.Error(), "OFPMMFC_INVALID_METER") {
		t.Fatalf("flow using a missing meter: %v (want refused, naming the OpenFlow error)", err)
	}
	flows, err := c.DumpFlows(ctx)
	if err != nil || len(flows) != 1 || flows[0].Priority != 0 {
		t.Fatalf("after a refused bundle: %+v, %v (want the base flow alone)", flows, err)
	}
	if err := c.AddMeter(ctx, ovs.Meter{ID: 7, RateKbps: 1000, BurstKb: 100}); err != nil {
		t.Fatal(err)
	}
	if err := c.ModMeter(ctx, ovs.Meter{ID: 7, RateKbps: 2000, BurstKb: 100}); err != nil {
		t.Fatal(err)
	}
	if err := c.ReplaceCookie(ctx, 1, ^uint64(0), []string{"cookie=1,priority=9,udp,actions=meter:7,NORMAL"}); err != nil {
		t.Fatalf("flow using an existing meter: %v", err)
	}
	ms, err := c.MeterStats(ctx)
	if err != nil || len(ms) != 1 || ms[0].ID != 7 || ms[0].Flows != 1 || len(ms[0].Bands) != 1 {
		t.Fatalf("meter stats %+v, %v", ms, err)
	}
	if err := c.DelMeter(ctx, 7); err != nil {
		t.Fatal(err)
	}
}

func readPid(t *testing.T, file string) string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	p := strings.TrimSpace(string(b))
	if _, err := strconv.Atoi(p); err != nil {
		t.Fatalf("pidfile %s: %q", file, p)
	}
	return p
}

package switchctl

import (
	"context"
	"fmt"
	"strings"

	"github.com/strata-rtc/strata/internal/netctl/api"
	"github.com/strata-rtc/strata/internal/ovs"
)

// Meters: the media reservation (netctl -reserve). For each api.Meter of the node the switch gets an
// OpenFlow meter with one drop band at the meter's rate, and a flow that sends what enters by the
// link's port (Meter.Interface) through it: priority 50, above the base flow and below the rules'
// flows, so that the managed media (the rules' 5-tuples) pass unmetered and everything else
// entering the link is policed.
const meterPriority = 50

// meterSpec is an OpenFlow meter the table needs, with the link it polices.
type meterSpec struct {
	ovs.Meter
	link, iface string
}

// ApplyMeters implements netctl.MeterEnforcer: it keeps node's latest meter set and wakes the
// worker, like ApplyRules.
func (e *Enforcer) ApplyMeters(node string, meters []api.Meter) {
	if node != e.cfg.Node {
		return
	}
	e.mu.Lock()
	e.meters, e.version = append([]api.Meter(nil), meters...), e.version+1
	e.st.RulesVersion = e.version
	e.mu.Unlock()
	select {
	case e.kick <- struct{}{}:
	default:
	}
}

// addMeters adds the meters and their flows to a table; a meter without an interface cannot be
// placed (the switch would not know which port's traffic to police) and is reported.
func (t *table) addMeters(meters []api.Meter) {
	for _, m := range meters {
		if m.Interface == "" || strings.ContainsAny(m.Interface, ",= \t") || m.RateBps <= 0 {
			t.unplaced = append(t.unplaced, m.Link)
			continue
		}
		id := uint32(len(t.meters) + 1)
		t.meters = append(t.meters, meterSpec{
			Meter: ovs.Meter{ID: id, RateKbps: uint64(max(1, (m.RateBps+999)/1000)), BurstKb: uint64(max(0, (m.BurstBits+999)/1000))},
			link:  m.Link, iface: m.Interface,
		})
		f := flowSpec{priority: meterPriority, match: "in_port=" + m.Interface, meter: id}
		f.fields = matchFields(f.match)
		t.add(f)
	}
}

// ensureMeters puts the table's meters on the switch before the flows that use them: add, or
// change in place when the switch already has the meter (flows using it keep it). Meters the
// switch holds that the table does not need are left for removeMeters, after the flows.
func (e *Enforcer) ensureMeters(ctx context.Context, w *worker, t *table, full bool) error {
	for _, m := range t.meters {
		if have, ok := w.meters[m.ID]; ok && have == m.Meter && !full {
			continue
		}
		err := e.client.AddMeter(ctx, m.Meter)
		if ovs.IsRefused(err) {
			err = e.client.ModMeter(ctx, m.Meter) // it exists already
		}
		if err != nil {
			return fmt.Errorf("meter %d for link %s: %w", m.ID, m.link, err)
		}
		w.meters[m.ID] = m.Meter
	}
	return nil
}

// removeMeters deletes the meters the switch holds that the table does not need.
func (e *Enforcer) removeMeters(ctx context.Context, w *worker, t *table) {
	need := make(map[uint32]bool, len(t.meters))
	for _, m := range t.meters {
		need[m.ID] = true
	}
	for id := range w.meters {
		if !need[id] {
			if err := e.client.DelMeter(ctx, id); err == nil || ovs.IsRefused(err) {
				delete(w.meters, id)
			}
		}
	}
}

// meterStatus is the table's meters with the switch's counters (nil stats: none yet).
func (t *table) meterStatus(stats []ovs.MeterStats) []api.SwitchMeter {
	out := make([]api.SwitchMeter, 0, len(t.meters))
	for _, m := range t.meters {
		sm := api.SwitchMeter{Link: m.link, Interface: m.iface, ID: m.ID, RateBps: int64(m.RateKbps) * 1000, BurstBits: int64(m.BurstKb) * 1000}
		for _, s := range stats {
			if s.ID == m.ID {
				sm.Packets, sm.Bytes = s.Packets, s.Bytes
				for _, b := range s.Bands {
					sm.DroppedPackets, sm.DroppedBytes = sm.DroppedPackets+b.Packets, sm.DroppedBytes+b.Bytes
				}
			}
		}
		out = append(out, sm)
	}
	return out
}

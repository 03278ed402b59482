package gateway

import (
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/strata-rtc/strata/internal/cluster"
	"github.com/strata-rtc/strata/internal/janus"
)

// A node's session ids carry its slot, once it has one, and stay JavaScript numbers; an unknown id
// of its own slot is 458 as ever.
func TestSessionIDsCarryTheNodeSlot(t *testing.T) {
	var slot atomic.Int64 // 0 until the node has claimed its slot
	e := newEnv(t, nil, WithNode(func() int { return int(slot.Load()) }, nil))
	e.create() // no slot yet: an id as without a cluster
	slot.Store(cluster.MaxSlot)
	for range 200 {
		id := e.create()
		if got := cluster.SessionSlot(id); got != cluster.MaxSlot {
			t.Fatalf("session %d carries slot %d, want %d", id, got, cluster.MaxSlot)
		}
	}
	slot.Store(5)
	id := e.create()
	if cluster.SessionSlot(id) != 5 || id >= 1<<53 {
		t.Fatalf("session %d: slot %d", id, cluster.SessionSlot(id))
	}
	unknown := cluster.WithSlot(12345, 5)
	if unknown == id {
		unknown++
	}
	wantCode(t, e.do(`{"janus":"keepalive","transaction":"k","session_id":{S}}`, unknown, 0), janus.ErrSessionNotFound)
}

// A client-chosen id must carry this node's slot, or other nodes would route it elsewhere.
func TestChosenSessionIDMustCarryTheSlot(t *testing.T) {
	e := newEnv(t, nil, WithNode(func() int { return 3 }, nil))
	other := cluster.WithSlot(77, 4)
	m := e.do(`{"janus":"create","transaction":"c","id":`+strconv.FormatUint(other, 10)+`}`, 0, 0)
	wantCode(t, m, janus.ErrSessionConflict)
	if !strings.Contains(m.Error.Reason, "slot 4") {
		t.Fatalf("reason %q does not name the slot", m.Error.Reason)
	}
	mine := cluster.WithSlot(77, 3)
	if got := dataID(t, e.do(`{"janus":"create","transaction":"c","id":`+strconv.FormatUint(mine, 10)+`}`, 0, 0)); got != mine {
		t.Fatalf("created %d, want %d", got, mine)
	}
}

// A node that takes no new sessions refuses create with 472 and its reason; the rest goes on.
func TestNodeNotAcceptingRefusesCreate(t *testing.T) {
	var refuse atomic.Bool
	e := newEnv(t, nil, WithNode(nil, func() (bool, string) {
		if refuse.Load() {
			return false, "draining"
		}
		return true, ""
	}))
	sid := e.create()
	refuse.Store(true)
	m := e.do(`{"janus":"create","transaction":"c"}`, 0, 0)
	wantCode(t, m, janus.ErrNotAcceptingSessions)
	if !strings.Contains(m.Error.Reason, "draining") {
		t.Fatalf("reason %q", m.Error.Reason)
	}
	if m := e.do(`{"janus":"keepalive","transaction":"k","session_id":{S}}`, sid, 0); m.Janus != "ack" {
		t.Fatalf("keepalive of an existing session: %s", janus.Encode(m))
	}
	refuse.Store(false)
	e.create()
}

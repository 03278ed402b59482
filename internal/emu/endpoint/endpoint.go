// Package endpoint holds the contracts between the emulation engine
// (internal/emu) and the flow kinds that run real endpoints in it (kernel
// TCP, UDP CBR, Pion media, Chromium, SFU sessions). It has no code of its
// own: the engine implements Clock, Recorder and (through topo) Host; each
// flow kind implements Flow and is built from an Env.
package endpoint

import (
	"context"
	"io"
	"net/netip"
	"os/exec"
	"time"

	"github.com/strata-rtc/strata/internal/lab/scenario"
)

// Clock is the run's clock: time since the run started (the same origin the
// links' capacity schedules use).
type Clock interface{ Now() time.Duration }

// Host is one endpoint's place in the network: its own leaf namespace
// attached by a plain veth (no emulation) to a scenario node. Chromium and
// Pion ignore loopback, so endpoints never use lo addresses.
type Host interface {
	// Name is the namespace's name (for `ip netns exec`).
	Name() string
	// Node is the scenario node the host hangs off.
	Node() string
	// Addr is the host's address; unique within the run.
	Addr() netip.Addr
	// Do runs f on a locked OS thread switched into the host's namespace;
	// sockets created in f (net.Listen, net.Dial, net.ListenPacket, Pion's
	// UDP muxes) stay in that namespace after f returns.
	Do(f func() error) error
	// Command is a process inside the host's namespace
	// (ip netns exec NAME name args...).
	Command(ctx context.Context, name string, args ...string) *exec.Cmd
}

// Recorder takes what only the endpoints know. It is safe for concurrent use
// and stamps each call with the run's clock. Network-side figures (bytes
// sent/delivered, losses, queue delay, marks) come from the links.
type Recorder interface {
	// Goodput counts new application payload delivered to the receiver.
	Goodput(bytes int)
	// Target is the controller's target rate (media, browser).
	Target(bps float64)
	// Cwnd is the congestion window (tcp).
	Cwnd(bytes float64)
	// RTT is a round-trip sample.
	RTT(rtt time.Duration)
}

// Flow is one running flow (both endpoints). Start sets both ends up and
// begins sending, returning once data flows or with an error; Stop ends
// sending and releases everything (processes, sockets, PeerConnections).
// Stop is called exactly once after a successful Start, also when the run is
// cancelled.
type Flow interface {
	Start(ctx context.Context) error
	Stop() error
}

// Env is what a flow constructor gets. A constructor's errors name the flow (the engine adds nothing).
type Env struct {
	// Spec is the scenario's flow: start/stop/pauses are absolute run times;
	// the engine calls Start at Spec.Start (+ jitter).
	Spec     scenario.Flow
	Src, Dst Host
	Rec      Recorder
	Clock    Clock
	Seed     uint64
	// Log takes progress and diagnostics.
	Log io.Writer
}

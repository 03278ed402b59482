// Package alloc decides how many layers of each subscription the network can carry. It is the
// core of the network controller (strata netctl), kept pure: no clock (time is an argument), no
// goroutines, no I/O, no maps, so that the controller, the simulator's SFU node and tests run the
// same code and the same inputs give the same decisions.
//
// The caller describes the network as links with the capacity left for managed streams
// (Link.Available: capacity minus background load) and the subscriptions as Demands: a path (link
// indices) and a ladder of layers, each with its own rate (layer i costs Layers[i] on top of the
// layers below it). It keeps one State per demand between calls and calls Step; State.Layers is
// the decision.
//
// Two modes:
//
//   - ModeJoint (the default) allocates all demands together, max-min fair at layer granularity:
//     every demand gets its base layer before any gets a second, every demand that can take a
//     second gets it before any gets a third, and so on. A new layer must fit on every link of
//     its path with a safety margin for bursts (Config.Margin), on top of every layer already
//     granted there (counted with the margin too); granted layers are kept while they fit with
//     Config.KeepMargin. Hysteresis: a demand is downgraded at once when its layers no longer fit
//     (on a link found over capacity, down to what fits there with the full Margin), and upgraded
//     only after the next layer has fitted continuously for Config.Hold (which doubles, up to
//     HoldMax, after an upgrade that had to be undone within FailWindow).
//   - ModePaper is seed 000's Algorithm 1 for each path independently: the path's capacity is the
//     minimum over its links of what is not used by other demands, and layers are added while
//     their cumulative rate stays strictly below it. No margin, no hold. It exists to compare
//     against the paper; two paths sharing a link can both claim the same spare capacity.
package alloc

import (
	"fmt"
	"time"

	"github.com/strata-rtc/strata/cc"
)

// Modes of allocation.
const (
	ModeJoint = "joint"
	ModePaper = "paper"
)

// Config tunes the allocator.
type Config struct {
	// Mode is ModeJoint or ModePaper.
	Mode string `yaml:"mode" json:"mode"`
	// Margin is the headroom a new layer needs for bursts (keyframes, scene changes): a layer of
	// rate r needs r×(1+Margin) of spare capacity on every link of the path.
	Margin float64 `yaml:"margin" json:"margin"`
	// KeepMargin is the headroom layers already granted need to be kept. Keeping it below Margin
	// leaves a dead band in which a layer is neither added nor removed.
	KeepMargin float64 `yaml:"keep_margin" json:"keep_margin"`
	// KeepBase grants the base layer even when it does not fit: as in seed 000, switches never
	// drop the base layer, so a receiver always gets some video.
	KeepBase bool `yaml:"keep_base" json:"keep_base"`
	// Hold is how long the next layer must fit before an upgrade.
	Hold time.Duration `yaml:"hold" json:"hold"`
	// FailWindow: a downgrade this soon after an upgrade means the upgrade failed, and the hold of
	// that demand doubles, up to HoldMax. A successful upgrade (one that lasts FailWindow) resets it.
	FailWindow time.Duration `yaml:"fail_window" json:"fail_window"`
	HoldMax    time.Duration `yaml:"hold_max" json:"hold_max"`
}

// DefaultConfig returns the defaults: joint allocation, 10 % burst margin for new layers, none for
// kept ones, base layer always, 2 s hold, doubling to 30 s after failed upgrades.
func DefaultConfig() Config {
	return Config{
		Mode: ModeJoint, Margin: 0.10, KeepMargin: 0, KeepBase: true,
		Hold: 2 * time.Second, FailWindow: 5 * time.Second, HoldMax: 30 * time.Second,
	}
}

// Validate reports nonsensical settings.
func (c Config) Validate() error {
	switch {
	case c.Mode != ModeJoint && c.Mode != ModePaper:
		return fmt.Errorf("alloc: unknown mode %q (want %s or %s)", c.Mode, ModeJoint, ModePaper)
	case !(c.Margin >= 0 && c.Margin <= 10) || !(c.KeepMargin >= 0 && c.KeepMargin <= 10):
		return fmt.Errorf("alloc: margins must be between 0 and 10 (got %g, %g)", c.Margin, c.KeepMargin)
	case c.Hold < 0 || c.FailWindow < 0 || c.HoldMax < c.Hold:
		return fmt.Errorf("alloc: need 0 <= hold <= hold_max and fail_window >= 0")
	}
	return nil
}

// Link is one link as the allocator sees it.
type Link struct {
	// Available is the capacity left for managed streams: capacity minus background load. It may
	// be zero or negative when background traffic fills the link.
	Available cc.Bitrate
}

// Demand is one subscription: the links from the SFU to the receiver and the stream's layers.
type Demand struct {
	Path []int
	// Layers holds each layer's own rate, base layer first: forwarding k layers costs the sum of
	// the first k.
	Layers []cc.Bitrate
}

// Rate is what forwarding the first k layers costs.
func (d *Demand) Rate(k int) cc.Bitrate {
	var sum cc.Bitrate
	for i := 0; i < k && i < len(d.Layers); i++ {
		sum += d.Layers[i]
	}
	return sum
}

// State is what the allocator remembers about one demand between steps; the exported fields are
// its output. A zero State is a new demand, which gets what fits at once (there is no decision yet
// that could flap).
type State struct {
	// Layers is the decision: how many layers the receiver may get now.
	Layers int
	// Target is what the last allocation pass would grant without hysteresis.
	Target int
	// Pending is the layer count of an upgrade waiting for its hold time (0: none), PendingSince
	// when it started to fit and Hold the hold time that applies.
	Pending      int
	PendingSince time.Duration
	Hold         time.Duration
	// Limit is the link that refused this demand's next layer in the last pass (-1: none, all
	// layers fit). Over says the base layer was granted although it did not fit on link Limit.
	Limit int
	Over  bool

	started  bool
	upgraded bool
	lastUp   time.Duration
}

package sim

import (
	"github.com/strata-rtc/strata/cc/ledbat"
	"github.com/strata-rtc/strata/cc/tcp"
)

// The tcp and ledbat packages take functional options over a Config
// struct; an Option is a func(*Config), so a closure that sets the whole
// struct applies a Config built from scenario parameters.

func init() {
	for _, v := range []tcp.Variant{tcp.Reno, tcp.NewReno, tcp.Cubic} {
		v := v
		def := tcp.DefaultConfig()
		specs := without(paramSpecs(def), "mss")
		register(&ControllerInfo{Name: v.String(), Kind: "tcp", Params: specs,
			Doc: "TCP " + v.String() + " (cc/tcp): slow start, fast retransmit/recovery, RFC 6298 RTO",
			build: func(p Params, env buildEnv) (Controllers, error) {
				cfg := tcp.DefaultConfig()
				if err := applyParams(&cfg, specs, p); err != nil {
					return Controllers{}, err
				}
				cfg.MSS = env.mss
				return Controllers{Window: tcp.New(v, func(c *tcp.Config) { *c = cfg })}, nil
			}})
	}
	for _, plus := range []bool{false, true} {
		plus := plus
		def := ledbat.DefaultConfig()
		name := "ledbat"
		if plus {
			ledbat.WithPlusPlus()(&def)
			name = "ledbat++"
		}
		specs := without(paramSpecs(def), "mss", "plus_plus")
		register(&ControllerInfo{Name: name, Kind: "ledbat", Params: specs,
			Doc: "LEDBAT window controller (cc/ledbat); ledbat++ adds the 60 ms target, dynamic gain and slowdowns",
			build: func(p Params, env buildEnv) (Controllers, error) {
				cfg := def
				if err := applyParams(&cfg, specs, p); err != nil {
					return Controllers{}, err
				}
				cfg.MSS = env.mss
				return Controllers{Window: ledbat.New(func(c *ledbat.Config) { *c = cfg })}, nil
			}})
	}
	register(&ControllerInfo{Name: "sctp", Kind: "ledbat",
		Doc: "an ordinary WebRTC data channel (reliable, ordered), whose only congestion control is SCTP's " +
			"(RFC 9260: TCP-like slow start, AIMD and SACK recovery): the simulator models it as TCP NewReno; " +
			"the emulator runs Pion's SCTP (or Chromium's)",
		build: func(p Params, env buildEnv) (Controllers, error) {
			cfg := tcp.DefaultConfig()
			cfg.MSS = env.mss
			return Controllers{Window: tcp.New(tcp.NewReno, func(c *tcp.Config) { *c = cfg })}, nil
		}})
}

// without drops parameters that scenarios must not set directly: the flow's
// mss field sets the MSS (so transport and controller agree) and the
// controller's name selects LEDBAT++.
func without(specs []ParamSpec, names ...string) []ParamSpec {
	out := specs[:0:0]
	for _, s := range specs {
		skip := false
		for _, n := range names {
			skip = skip || s.Name == n
		}
		if !skip {
			out = append(out, s)
		}
	}
	return out
}

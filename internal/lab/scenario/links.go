package scenario

import (
	"gopkg.in/yaml.v3"

	"github.com/strata-rtc/strata/internal/sim"
	"github.com/strata-rtc/strata/internal/yamlfield"
)

// linkFields are the fields a link (or its reverse direction) may set.
type linkFields struct {
	rate     float64
	hasRate  bool
	schedule []sim.RateStep
	cfg      sim.LinkConfig
	queueSet bool
}

func (d *decoder) linkFieldHandlers(lf *linkFields) map[string]fieldFn {
	return map[string]fieldFn{
		"rate": func(v *yaml.Node, f string) {
			d.Rate(v, f, &lf.rate)
			lf.hasRate = true
		},
		"schedule": func(v *yaml.Node, f string) { lf.schedule = d.schedule(v, f) },
		"delay":    func(v *yaml.Node, f string) { d.Duration(v, f, &lf.cfg.Delay) },
		"jitter":   func(v *yaml.Node, f string) { d.Duration(v, f, &lf.cfg.Jitter) },
		"queue": func(v *yaml.Node, f string) {
			lf.cfg.Queue = d.limit(v, f)
			lf.queueSet = true
		},
		"ecn":      func(v *yaml.Node, f string) { lf.cfg.ECN = d.limit(v, f) },
		"loss":     func(v *yaml.Node, f string) { lf.cfg.Loss = d.loss(v, f) },
		"overhead": func(v *yaml.Node, f string) { d.Bytes(v, f, &lf.cfg.Overhead) },
	}
}

// finish turns rate and schedule into the link's capacity schedule.
func (lf *linkFields) finish(d *decoder, n *yaml.Node, field string) {
	var sched sim.RateSchedule
	if lf.hasRate {
		sched = append(sched, sim.RateStep{At: 0, Bps: lf.rate})
	}
	for _, st := range lf.schedule {
		if st.At == 0 && len(sched) > 0 {
			d.Failf(n, field+".schedule", "a step at 0s conflicts with rate; give one or the other")
			return
		}
		sched = append(sched, st)
	}
	if len(sched) == 0 {
		d.Failf(n, field+".rate", "a link needs a rate (e.g. rate: 10Mbps) or a schedule")
		return
	}
	if err := sched.Validate(); err != nil {
		d.Failf(n, field+".schedule", "%v", err)
		return
	}
	lf.cfg.Rate = sched
	if !lf.queueSet {
		// RFC 8867's default bottleneck queue: 300 ms at the link rate.
		lf.cfg.Queue = sim.Limit{Unit: sim.LimitTime, Value: 0.3}
	}
}

func decodeLinks(d *decoder, n *yaml.Node) []Link {
	var out []Link
	d.Sequence(n, "links", func(v *yaml.Node, field string, _ int) {
		var lf linkFields
		var duplex bool
		var reverseNode *yaml.Node
		if name := nameOf(v); name != "" {
			field = "links[" + name + "]"
		}
		h := d.linkFieldHandlers(&lf)
		h["name"] = func(v *yaml.Node, f string) { d.Str(v, f, &lf.cfg.Name) }
		h["from"] = func(v *yaml.Node, f string) { d.Str(v, f, &lf.cfg.From) }
		h["to"] = func(v *yaml.Node, f string) { d.Str(v, f, &lf.cfg.To) }
		h["duplex"] = func(v *yaml.Node, f string) { d.Boolean(v, f, &duplex) }
		h["reverse"] = func(v *yaml.Node, f string) { reverseNode = v }
		var sw string
		h["switch"] = func(v *yaml.Node, f string) {
			if d.Str(v, f, &sw); sw != SwitchOVS && sw != "none" {
				d.Failf(v, f, "unknown switch %q (ovs or none)", sw)
			}
		}
		d.Mapping(v, field, h)
		if lf.cfg.Name == "" || lf.cfg.From == "" || lf.cfg.To == "" {
			d.Failf(v, field, "a link needs name, from and to")
			return
		}
		if lf.cfg.From == lf.cfg.To {
			d.Failf(v, field+".to", "a link cannot loop to its own node")
		}
		lf.finish(d, v, field)
		if sw == "none" {
			sw = ""
		}
		out = append(out, Link{LinkConfig: lf.cfg, Switch: sw, Line: v.Line})
		if reverseNode != nil && !duplex {
			d.Failf(reverseNode, field+".reverse", "reverse needs duplex: true")
		}
		if !duplex {
			return
		}
		// The reverse direction copies the forward one unless overridden.
		rev := linkFields{rate: lf.rate, hasRate: lf.hasRate, schedule: lf.schedule, cfg: lf.cfg, queueSet: lf.queueSet}
		rev.cfg.Name, rev.cfg.From, rev.cfg.To = lf.cfg.Name+"-rev", lf.cfg.To, lf.cfg.From
		rev.cfg.Loss = sim.LossConfig{}
		if reverseNode != nil {
			if hasKey(reverseNode, "rate") || hasKey(reverseNode, "schedule") {
				rev.hasRate, rev.schedule = false, nil // the reverse capacity is given in full
			}
			rh := d.linkFieldHandlers(&rev)
			rh["name"] = func(v *yaml.Node, f string) { d.Str(v, f, &rev.cfg.Name) }
			d.Mapping(reverseNode, field+".reverse", rh)
		}
		rev.finish(d, v, field+".reverse")
		out = append(out, Link{LinkConfig: rev.cfg, Line: v.Line})
	})
	return out
}

func (d *decoder) schedule(n *yaml.Node, field string) []sim.RateStep {
	var out []sim.RateStep
	d.Sequence(n, field, func(v *yaml.Node, f string, _ int) {
		var st sim.RateStep
		var hasAt, hasRate bool
		d.Mapping(v, f, map[string]fieldFn{
			"at":   func(v *yaml.Node, f string) { d.Duration(v, f, &st.At); hasAt = true },
			"rate": func(v *yaml.Node, f string) { d.Rate(v, f, &st.Bps); hasRate = true },
		})
		if !hasAt || !hasRate {
			d.Failf(v, f, "a schedule step needs at and rate")
			return
		}
		out = append(out, st)
	})
	return out
}

// limit parses a queue size or marking threshold: "100pkt", "60KB", "300ms".
func (d *decoder) limit(n *yaml.Node, field string) sim.Limit {
	s, ok := d.Scalar(n, field)
	if !ok {
		return sim.Limit{}
	}
	if s == "unlimited" || s == "none" {
		return sim.Limit{}
	}
	if yamlfield.IsDurationUnit(s) {
		v, err := yamlfield.ParseDuration(s)
		if err != nil {
			d.Failf(n, field, "%v", err)
			return sim.Limit{}
		}
		return sim.Limit{Unit: sim.LimitTime, Value: v.Seconds()}
	}
	v, pkts, err := yamlfield.ParseSize(s, true)
	if err != nil {
		d.Failf(n, field, "%v", err)
		return sim.Limit{}
	}
	if pkts {
		return sim.Limit{Unit: sim.LimitPackets, Value: v}
	}
	return sim.Limit{Unit: sim.LimitBytes, Value: v}
}

// loss parses "5%" (random loss) or a mapping naming a model.
func (d *decoder) loss(n *yaml.Node, field string) sim.LossConfig {
	if n != nil && n.Kind == yaml.ScalarNode {
		var p float64
		d.Probability(n, field, &p)
		if p == 0 {
			return sim.LossConfig{}
		}
		return sim.LossConfig{Model: "random", P: p}
	}
	c := sim.LossConfig{Model: "random", LossBad: 1}
	d.Mapping(n, field, map[string]fieldFn{
		"model":     func(v *yaml.Node, f string) { d.Str(v, f, &c.Model) },
		"p":         func(v *yaml.Node, f string) { d.Probability(v, f, &c.P) },
		"r":         func(v *yaml.Node, f string) { d.Probability(v, f, &c.R) },
		"loss_good": func(v *yaml.Node, f string) { d.Probability(v, f, &c.LossGood) },
		"loss_bad":  func(v *yaml.Node, f string) { d.Probability(v, f, &c.LossBad) },
	})
	if err := c.Validate(); err != nil {
		d.Failf(n, field, "%v", err)
	}
	return c
}

func hasKey(n *yaml.Node, key string) bool {
	n = deref(n)
	if n == nil || n.Kind != yaml.MappingNode {
		return false
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return true
		}
	}
	return false
}

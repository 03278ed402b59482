package scenario

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/strata-rtc/strata/internal/sim"
	"github.com/strata-rtc/strata/internal/yamlfield"
)

// Flow kinds.
const (
	KindMedia  = "media"
	KindTCP    = "tcp"
	KindLEDBAT = "ledbat"
	KindCBR    = "cbr"
)

// kindFields lists the fields that only some kinds accept.
var kindFields = map[string][]string{
	"codec": {KindMedia}, "layers": {KindMedia}, "feedback_interval": {KindMedia}, "pause": {KindMedia},
	"packet_size": {KindMedia, KindCBR}, "rate": {KindCBR},
	"mss": {KindTCP, KindLEDBAT}, "delayed_ack": {KindTCP, KindLEDBAT}, "onoff": {KindTCP},
	"sack": {KindTCP, KindLEDBAT}, "rwnd": {KindTCP, KindLEDBAT},
	"cc": {KindMedia, KindTCP, KindLEDBAT}, "params": {KindMedia, KindTCP, KindLEDBAT},
	"ecn": {KindMedia, KindTCP, KindLEDBAT, KindCBR}, "receiver": {KindBrowser}, "video": {KindBrowser},
	"endpoint": {KindLEDBAT},
}

// Endpoints of a ledbat flow in emulation (the simulator models both alike).
const (
	EndpointPion    = "pion"    // Pion PeerConnections in both hosts (the default)
	EndpointBrowser = "browser" // headless Chromium sends (web/lib/lowprio.js, or a plain data channel for sctp)
)

func decodeFlows(d *decoder, n *yaml.Node, s *Scenario) []Flow {
	var out []Flow
	d.Sequence(n, "flows", func(v *yaml.Node, field string, _ int) {
		out = append(out, decodeFlow(d, v, field, s)...)
	})
	return out
}

func decodeFlow(d *decoder, v *yaml.Node, field string, s *Scenario) []Flow {
	f := Flow{Stop: s.Duration, Codec: sim.DefaultCodecConfig(), Line: v.Line,
		Receiver: ReceiverBrowser, Video: DefaultBrowserVideo(), Endpoint: EndpointPion}
	if name := nameOf(v); name != "" {
		field = "flows[" + name + "]"
	}
	count := 1
	var startStep time.Duration
	var paramsNode *yaml.Node
	set := map[string]*yaml.Node{}
	mark := func(name string, fn fieldFn) fieldFn {
		return func(v *yaml.Node, fl string) { set[name] = v; fn(v, fl) }
	}
	d.Mapping(v, field, map[string]fieldFn{
		"name":              func(v *yaml.Node, fl string) { d.Str(v, fl, &f.Name) },
		"kind":              func(v *yaml.Node, fl string) { d.Str(v, fl, &f.Kind) },
		"cc":                mark("cc", func(v *yaml.Node, fl string) { d.Str(v, fl, &f.CC) }),
		"params":            mark("params", func(v *yaml.Node, fl string) { paramsNode = v }),
		"path":              func(v *yaml.Node, fl string) { d.StrList(v, fl, &f.Path) },
		"reverse_path":      func(v *yaml.Node, fl string) { d.StrList(v, fl, &f.ReversePath) },
		"start":             func(v *yaml.Node, fl string) { d.Duration(v, fl, &f.Start) },
		"stop":              func(v *yaml.Node, fl string) { d.Duration(v, fl, &f.Stop) },
		"start_jitter":      func(v *yaml.Node, fl string) { d.Duration(v, fl, &f.StartJitter) },
		"start_step":        func(v *yaml.Node, fl string) { d.Duration(v, fl, &startStep) },
		"count":             func(v *yaml.Node, fl string) { d.Integer(v, fl, 1, 1000, &count) },
		"ecn":               mark("ecn", func(v *yaml.Node, fl string) { d.Boolean(v, fl, &f.ECN) }),
		"receiver":          mark("receiver", func(v *yaml.Node, fl string) { d.receiver(v, fl, &f.Receiver) }),
		"video":             mark("video", func(v *yaml.Node, fl string) { d.browserVideo(v, fl, &f.Video) }),
		"endpoint":          mark("endpoint", func(v *yaml.Node, fl string) { d.endpoint(v, fl, &f.Endpoint) }),
		"codec":             mark("codec", func(v *yaml.Node, fl string) { d.codec(v, fl, &f.Codec) }),
		"layers":            mark("layers", func(v *yaml.Node, fl string) { f.Codec.Layers = d.rates(v, fl) }),
		"feedback_interval": mark("feedback_interval", func(v *yaml.Node, fl string) { d.Duration(v, fl, &f.Feedback) }),
		"pause":             mark("pause", func(v *yaml.Node, fl string) { f.Pauses = d.pauses(v, fl) }),
		"packet_size":       mark("packet_size", func(v *yaml.Node, fl string) { d.Bytes(v, fl, &f.PacketSize) }),
		"rate":              mark("rate", func(v *yaml.Node, fl string) { d.Rate(v, fl, &f.Rate) }),
		"mss":               mark("mss", func(v *yaml.Node, fl string) { d.Bytes(v, fl, &f.MSS) }),
		"delayed_ack":       mark("delayed_ack", func(v *yaml.Node, fl string) { d.Integer(v, fl, 1, 16, &f.DelayedAck) }),
		"onoff":             mark("onoff", func(v *yaml.Node, fl string) { f.OnOff = d.onoff(v, fl) }),
		"sack": mark("sack", func(v *yaml.Node, fl string) {
			sack := true
			d.Boolean(v, fl, &sack)
			f.NoSACK = !sack
		}),
		"rwnd": mark("rwnd", func(v *yaml.Node, fl string) { d.Bytes(v, fl, &f.RcvWindow) }),
	})
	if f.Name == "" {
		d.Failf(v, field+".name", "a flow needs a name")
	}
	f.Group = f.Name
	ccNode := set["cc"]
	if ccNode == nil {
		ccNode = v
	}
	f.Kind = inferKind(d, ccNode, field, f.Kind, f.CC)
	names := make([]string, 0, len(set))
	for name := range set {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if kinds, ok := kindFields[name]; ok && f.Kind != "" && !contains(kinds, f.Kind) {
			d.Failf(set[name], field+"."+name, "only %s flows take %s", strings.Join(kinds, " and "), name)
		}
	}
	if f.Kind == KindCBR && f.Rate <= 0 {
		d.Failf(v, field+".rate", "a cbr flow needs a positive rate")
	}
	if paramsNode != nil && f.CC != "" {
		f.Params = d.params(paramsNode, field+".params", f.CC)
	}
	if count == 1 {
		return []Flow{f}
	}
	out := make([]Flow, count)
	for i := range out {
		out[i] = f
		out[i].Name = fmt.Sprintf("%s-%d", f.Name, i+1)
		out[i].Start = f.Start + time.Duration(i)*startStep
	}
	return out
}

func (d *decoder) endpoint(v *yaml.Node, field string, dst *string) {
	d.Str(v, field, dst)
	if *dst != EndpointPion && *dst != EndpointBrowser {
		d.Failf(v, field, "unknown endpoint %q (pion or browser)", *dst)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// inferKind checks kind against the controller, filling it in when absent.
func inferKind(d *decoder, v *yaml.Node, field, kind, ccName string) string {
	switch kind {
	case "", KindMedia, KindTCP, KindLEDBAT, KindCBR, KindBrowser:
	default:
		d.Failf(v, field+".kind", "unknown kind %q (media, tcp, ledbat, cbr or browser)", kind)
		return ""
	}
	if kind == KindCBR || kind == KindBrowser {
		return kind // no controller of ours: cbr has none, a browser brings libwebrtc's
	}
	if ccName == "" {
		d.Failf(v, field+".cc", "a %s flow needs a controller (cc: one of %s)", orDefault(kind, "media/tcp/ledbat"),
			strings.Join(sim.ControllerNames(kind), ", "))
		return kind
	}
	info, ok := sim.LookupController(ccName)
	if !ok {
		d.Failf(v, field+".cc", "unknown controller %q (known: %s)", ccName, strings.Join(sim.ControllerNames(kind), ", "))
		return kind
	}
	if kind != "" && info.Kind != kind {
		d.Failf(v, field+".cc", "%s drives %s flows, not %s flows", ccName, info.Kind, kind)
	}
	return info.Kind
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// params decodes controller parameters by the units the controller declares.
func (d *decoder) params(n *yaml.Node, field, ccName string) sim.Params {
	info, ok := sim.LookupController(ccName)
	if !ok {
		return nil
	}
	fields := map[string]fieldFn{}
	out := sim.Params{}
	for _, spec := range info.Params {
		spec := spec
		fn := func(v *yaml.Node, f string) {
			var pv sim.ParamValue
			before := d.Count()
			switch spec.Unit {
			case sim.UnitRate:
				d.Rate(v, f, &pv.F)
			case sim.UnitDuration:
				d.Duration(v, f, &pv.D)
			case sim.UnitFloat:
				d.Number(v, f, &pv.F)
			case sim.UnitInt:
				var i int
				d.Integer(v, f, -1<<31, 1<<31, &i)
				pv.F = float64(i)
			case sim.UnitBytes:
				var b int
				d.Bytes(v, f, &b)
				pv.F = float64(b)
			case sim.UnitBool:
				d.Boolean(v, f, &pv.B)
			case sim.UnitFloats:
				d.Sequence(v, f, func(x *yaml.Node, xf string, _ int) {
					var y float64
					d.Number(x, xf, &y)
					pv.L = append(pv.L, y)
				})
			}
			if d.Count() == before {
				out[spec.Name] = pv
			}
		}
		fields[spec.Name] = fn
		if a := spec.Alias(); a != spec.Name {
			fields[a] = fn
		}
	}
	d.Mapping(n, field, fields)
	return out
}

func (d *decoder) codec(n *yaml.Node, field string, c *sim.CodecConfig) {
	d.Mapping(n, field, map[string]fieldFn{
		"model":             func(v *yaml.Node, f string) { d.Str(v, f, &c.Model) },
		"fps":               func(v *yaml.Node, f string) { d.Number(v, f, &c.FPS) },
		"tau":               func(v *yaml.Node, f string) { d.Duration(v, f, &c.Tau) },
		"burst_frames":      func(v *yaml.Node, f string) { d.Integer(v, f, 1, 1000, &c.BurstFrames) },
		"burst_size":        func(v *yaml.Node, f string) { d.Bytes(v, f, &c.BurstSize) },
		"scale_size":        func(v *yaml.Node, f string) { d.Number(v, f, &c.ScaleSize) },
		"scale_interval":    func(v *yaml.Node, f string) { d.Number(v, f, &c.ScaleInterval) },
		"change_threshold":  func(v *yaml.Node, f string) { d.Number(v, f, &c.ChangeThreshold) },
		"keyframe_interval": func(v *yaml.Node, f string) { d.Duration(v, f, &c.KeyframeInterval) },
		"min_rate":          func(v *yaml.Node, f string) { d.Rate(v, f, &c.MinRate) },
		"max_rate":          func(v *yaml.Node, f string) { d.Rate(v, f, &c.MaxRate) },
		"width":             func(v *yaml.Node, f string) { d.Integer(v, f, 16, 4096, &c.Width) },
		"height":            func(v *yaml.Node, f string) { d.Integer(v, f, 16, 4096, &c.Height) },
		"content":           func(v *yaml.Node, f string) { d.Str(v, f, &c.Content) },
		"adapt": func(v *yaml.Node, f string) {
			var on bool
			d.Boolean(v, f, &on)
			c.Adapt = &on
		},
	})
	if err := c.Validate(); err != nil {
		d.Failf(n, field, "%v", err)
	}
}

func (d *decoder) rates(n *yaml.Node, field string) []float64 {
	var out []float64
	d.Sequence(n, field, func(v *yaml.Node, f string, _ int) {
		var r float64
		d.Rate(v, f, &r)
		if r <= 0 {
			d.Failf(v, f, "a layer needs a positive rate")
		}
		out = append(out, r)
	})
	return out
}

func (d *decoder) pauses(n *yaml.Node, field string) []sim.Interval {
	var out []sim.Interval
	d.Sequence(n, field, func(v *yaml.Node, f string, _ int) {
		var iv sim.Interval
		d.Mapping(v, f, map[string]fieldFn{
			"from": func(v *yaml.Node, f string) { d.Duration(v, f, &iv.From) },
			"to":   func(v *yaml.Node, f string) { d.Duration(v, f, &iv.To) },
		})
		if iv.To <= iv.From {
			d.Failf(v, f, "a pause needs from < to")
		}
		out = append(out, iv)
	})
	return out
}

func (d *decoder) onoff(n *yaml.Node, field string) *sim.OnOffConfig {
	o := &sim.OnOffConfig{}
	d.Mapping(n, field, map[string]fieldFn{
		"size": func(v *yaml.Node, f string) {
			var sizes []string
			d.StrList(v, f, &sizes)
			if len(sizes) != 2 {
				d.Failf(v, f, "size takes [min, max], e.g. [30KB, 50KB]")
				return
			}
			lo, _, e1 := yamlfield.ParseSize(sizes[0], false)
			hi, _, e2 := yamlfield.ParseSize(sizes[1], false)
			if e1 != nil || e2 != nil || lo <= 0 || hi < lo || hi > 1e12 {
				d.Failf(v, f, "size takes [min, max] with units, min > 0 and max >= min")
				return
			}
			o.SizeMin, o.SizeMax = int(lo), int(hi)
		},
		"off_mean": func(v *yaml.Node, f string) { d.Duration(v, f, &o.OffMean) },
		"start_on": func(v *yaml.Node, f string) { d.Boolean(v, f, &o.StartOn) },
	})
	if o.SizeMin <= 0 || o.OffMean <= 0 {
		d.Failf(n, field, "onoff needs size: [min, max] and off_mean")
	}
	return o
}

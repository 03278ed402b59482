package netctl

import (
	"bytes"
	"html/template"
	"net/http"
	"sync"

	"github.com/strata-rtc/strata/cc"
	"github.com/strata-rtc/strata/internal/netctl/api"
)

// statusPage is the HTML status page: a snapshot of the controller that refreshes itself. It is
// parsed on first use: parsing at start-up cost every strata command (a lab run included) half a
// millisecond.
var statusPage = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("status").Funcs(template.FuncMap{
		"rate": func(bps int64) string {
			if bps >= int64(cc.MaxBitrate) {
				return "unlimited"
			}
			return cc.Bitrate(bps).String()
		},
		"pct": func(part, whole int64) int64 {
			if whole <= 0 {
				return 0
			}
			return min(100, max(0, 100*part/whole))
		},
	}).Parse(`<!doctype html>
<html><head><meta charset="utf-8"><meta http-equiv="refresh" content="2">
<title>strata netctl: {{.Topology}}</title>
<style>
body{font:14px system-ui,sans-serif;margin:1.5em;color:#222}
table{border-collapse:collapse;margin-bottom:1.5em}
th,td{border-bottom:1px solid #ddd;padding:.3em .7em;text-align:left}
th{background:#f4f4f4}
td.n{text-align:right;font-variant-numeric:tabular-nums}
.bar{background:#eee;width:8em;height:.8em;position:relative}
.bar span{position:absolute;top:0;left:0;height:100%}
.m{background:#4a8}.b{background:#c84}
small{color:#777}
</style></head><body>
<h1>netctl <small>{{.Topology}} · mode {{.Mode}} · margin {{.Margin}} · hold {{.Hold}} · refreshed every 2 s</small></h1>
<h2>Links</h2>
<table><tr><th>link</th><th>from → to</th><th>capacity</th><th>load</th><th>managed</th><th>background</th><th>available</th><th>use</th><th>source</th><th>subs</th></tr>
{{range .Links}}<tr><td>{{.Name}}</td><td>{{.From}} → {{.To}}</td>
<td class="n">{{rate .CapacityBps}}{{if .Override}} (set){{end}}</td><td class="n">{{rate .LoadBps}}</td>
<td class="n">{{rate .ManagedBps}}</td><td class="n">{{rate .BackgroundBps}}</td><td class="n">{{rate .AvailableBps}}</td>
<td><div class="bar"><span class="b" style="width:{{pct .BackgroundBps .CapacityBps}}%"></span></div>
<div class="bar"><span class="m" style="width:{{pct .ManagedBps .CapacityBps}}%"></span></div></td>
<td>{{.Source}}{{if .AgeMs}} <small>{{printf "%.0f" .AgeMs}} ms ago</small>{{end}}</td><td class="n">{{.Subscriptions}}</td></tr>
{{end}}</table>
<h2>Decisions</h2>
{{if .Decisions}}<table><tr><th>subscription</th><th>stream</th><th>receiver</th><th>layers</th><th>rate</th><th>path available</th><th>thinned by</th><th>why</th></tr>
{{range .Decisions}}<tr><td>{{.Subscription}}</td><td>{{.Stream}}</td><td>{{.Receiver}}</td>
<td class="n">{{.Layers}} / {{.MaxLayers}}</td><td class="n">{{rate .RateBps}}</td><td class="n">{{rate .PathAvailableBps}}</td><td>{{if .Enforced}}switch{{else}}SFU{{end}}</td><td>{{.Reason}}</td></tr>
{{end}}</table>{{else}}<p>No subscriptions.</p>{{end}}
<h2>Switches</h2>
{{if .Switches}}<table><tr><th>node</th><th>target</th><th>state</th><th>rules</th><th>installed / given</th><th>installed at</th><th>resyncs</th><th>error</th></tr>
{{range .Switches}}<tr><td>{{.Node}}</td><td>{{.Target}}</td><td>{{.State}}</td>
<td class="n">{{.Rules}}{{if .Unenforceable}} <small>({{len .Unenforceable}} unenforceable)</small>{{end}}</td>
<td class="n">v{{.InstalledVersion}} / v{{.RulesVersion}}</td><td>{{if not .InstalledAt.IsZero}}{{.InstalledAt.Format "15:04:05.000"}}{{end}}</td>
<td class="n">{{.Resyncs}}</td><td>{{.Error}}</td></tr>
{{end}}</table>
{{range .Switches}}{{if .Flows}}<h3>{{.Node}} flows <small>counters as of the last check</small></h3>
<table><tr><th>subscription</th><th>dscp</th><th>action</th><th>packets</th><th>bytes</th></tr>
{{range .Flows}}<tr><td>{{.Subscription}}</td><td class="n">{{.DSCP}}</td><td>{{.Action}}</td><td class="n">{{.Packets}}</td><td class="n">{{.Bytes}}</td></tr>
{{end}}</table>{{end}}{{if .Meters}}<h3>{{.Node}} meters <small>non-media traffic entering a link</small></h3>
<table><tr><th>link</th><th>port</th><th>rate</th><th>burst</th><th>packets in</th><th>dropped</th></tr>
{{range .Meters}}<tr><td>{{.Link}}</td><td>{{.Interface}}</td><td class="n">{{rate .RateBps}}</td><td class="n">{{.BurstBits}} bit</td><td class="n">{{.Packets}}</td><td class="n">{{.DroppedPackets}}</td></tr>
{{end}}</table>{{end}}{{end}}{{else}}<p>No switches (strata netctl serve -switch NODE=unix:/path/br0.mgmt).</p>{{end}}
<h2>Streams</h2>
{{if .Streams}}<table><tr><th>stream</th><th>source</th><th>layer rates</th></tr>
{{range .Streams}}<tr><td>{{.ID}}</td><td>{{.Source}}</td><td>{{range $i, $l := .Layers}}{{if $i}}, {{end}}{{rate $l.RateBps}}{{end}}</td></tr>
{{end}}</table>{{else}}<p>No streams.</p>{{end}}
<h2>Drop rules</h2>
{{range .Rules}}{{if or .Rules .Meters}}<h3>{{.Node}} <small>version {{.Version}}</small></h3>
<table><tr><th>subscription</th><th>stream</th><th>link</th><th>forward</th></tr>
{{range .Rules}}<tr><td>{{.Subscription}}</td><td>{{.Stream}}</td><td>{{.Link}}</td><td class="n">{{.Allow}} of {{.Layers}} layers</td></tr>
{{end}}</table>
{{if .Meters}}<table><tr><th>link</th><th>non-media traffic metered to</th><th>burst</th></tr>
{{range .Meters}}<tr><td>{{.Link}}</td><td class="n">{{rate .RateBps}}</td><td class="n">{{.BurstBits}} bit</td></tr>
{{end}}</table>{{end}}{{end}}{{else}}<p>No rules.</p>{{end}}
<p><small>JSON: <a href="/v1/topology">topology</a> · <a href="/v1/links">links</a> · <a href="/v1/streams">streams</a> ·
<a href="/v1/subscriptions">subscriptions</a> · <a href="/v1/decisions">decisions</a> · <a href="/v1/decisions/stream">decision stream</a> ·
<a href="/v1/switches">switches</a></small></p>
</body></html>
`))
})

type statusData struct {
	Topology, Mode string
	Margin         float64
	Hold           string
	Links          []api.LinkState
	Decisions      []api.Decision
	Streams        []api.Stream
	Rules          []api.Rules
	Switches       []api.Switch
}

func (s *Server) status(w http.ResponseWriter, _ *http.Request) {
	cfg := s.ctl.Config().Alloc
	d := statusData{
		Topology: s.ctl.Topology().Name(), Mode: cfg.Mode, Margin: cfg.Margin, Hold: cfg.Hold.String(),
		Links: s.ctl.Links(), Decisions: s.ctl.Decisions().Decisions, Streams: s.ctl.Streams(),
		Switches: s.switchList(),
	}
	for _, n := range s.ctl.Topology().Nodes() {
		if r := s.ctl.Rules().Rules(n.Name); len(r.Rules) > 0 || len(r.Meters) > 0 {
			d.Rules = append(d.Rules, r)
		}
	}
	var buf bytes.Buffer
	if err := statusPage().Execute(&buf, d); err != nil {
		s.fail(w, err)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write(buf.Bytes())
}

package videoroom

import (
	"fmt"
	"testing"

	"github.com/strata-rtc/strata/internal/config"
)

// TestNetctlView: nothing without a controller; with one, the bridge's cached decisions, sorted.
func TestNetctlView(t *testing.T) {
	if v := (&Plugin{}).NetctlView(); v != nil {
		t.Errorf("view %v without a controller", v)
	}
	b := &netBridge{cfg: config.VideoRoomNetCtl{URL: "http://ctl:9000", Node: "sfu"}, watchUp: true,
		decisions: map[string]netDecision{"s2": {layers: 1}, "s1": {layers: 3, enforced: true}}}
	v, _ := (&Plugin{net: b}).NetctlView().(map[string]any)
	if v == nil || v["url"] != "http://ctl:9000" || v["connected"] != true {
		t.Fatalf("view %v", v)
	}
	ds := v["decisions"]
	if s := fmtAny(ds); s != "[{s1 3 true} {s2 1 false}]" {
		t.Errorf("decisions %s", s)
	}
}

func fmtAny(v any) string { return fmt.Sprint(v) }

package probe

import (
	"strings"
	"testing"

	"github.com/pion/sdp/v3"
)

// TestCases: the battery is hundreds of distinct cases, and Expand puts the live ids in.
func TestCases(t *testing.T) {
	cs := Cases()
	names := map[string]bool{}
	for _, c := range cs {
		if names[c.Name] {
			t.Errorf("case name %q twice", c.Name)
		}
		names[c.Name] = true
	}
	if len(cs) < 700 {
		t.Fatalf("%d cases", len(cs))
	}
	path, body := Case{Path: "/SESSION/HANDLE", Body: `{"session_id":SESSION}`}.Expand(12, 34)
	if path != "/12/34" || body != `{"session_id":12}` {
		t.Fatalf("expanded to %q %q", path, body)
	}
	if got := withIDs(`{"janus":"x"}`, 1, 2, true); got != "{\"handle_id\":2,\"janus\":\"x\",\"session_id\":1}\n" {
		t.Fatalf("withIDs: %q", got)
	}
	if got := withIDs(`null`, 1, 2, true); got != `null` {
		t.Fatalf("withIDs(null): %q", got)
	}
}

// TestGrowOffer: the grown offer parses, has the m-lines asked for, each bundled with its own mid,
// and 10,000 of them fit under the default 1 MB message limit.
func TestGrowOffer(t *testing.T) {
	base, err := RealOffer()
	if err != nil {
		t.Fatal(err)
	}
	grown := GrowOffer(base, 10000)
	var d sdp.SessionDescription
	if err := d.Unmarshal([]byte(grown)); err != nil {
		t.Fatal(err)
	}
	if len(d.MediaDescriptions) != 10000 || len(grown) > 1<<20-4096 {
		t.Fatalf("%d m-lines in %d bytes", len(d.MediaDescriptions), len(grown))
	}
	if mid, _ := d.MediaDescriptions[9999].Attribute("mid"); mid != "9999" {
		t.Fatalf("last mid %q", mid)
	}
	if g, _ := d.Attribute("group"); !strings.HasPrefix(g, "BUNDLE 0 1 2") {
		t.Fatalf("group %q", g)
	}
}

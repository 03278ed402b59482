package sfuflow

import (
	"strings"
	"testing"
)

// The switches' drop flows count in the layer of their mark, for the session whose stream the
// subscription belongs to; pass flows, other marks and other streams count nowhere.
func TestLayerSwitchDrops(t *testing.T) {
	body := `[{"node": "paris", "flows": [
	  {"subscription": "r1.f11.m1.h5.video11-1", "dscp": 34, "action": "pass", "packets": 900},
	  {"subscription": "r1.f11.m1.h5.video11-1", "dscp": 36, "action": "drop", "packets": 7},
	  {"subscription": "r1.f11.m1.h5.video11-1", "dscp": 38, "action": "drop", "packets": 3820},
	  {"subscription": "r1.f111.m1.h6.video111-1", "dscp": 38, "action": "drop", "packets": 50},
	  {"subscription": "r1.f11.m1.h5.video11-1", "dscp": 46, "action": "drop", "packets": 9}]},
	 {"node": "madrid", "flows": [
	  {"subscription": "r1.f11.m1.h5.video11-1", "dscp": 38, "action": "drop", "packets": 1}]}]`
	got, err := layerSwitchDrops([]byte(body), []string{streamPrefix(1, 11), streamPrefix(1, 111), ""}, [3]uint8{34, 36, 38})
	if err != nil {
		t.Fatal(err)
	}
	want := [][3]int64{{0, 7, 3821}, {0, 0, 50}, {0, 0, 0}}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("session %d: drops per layer %v, want %v", i, got[i], want[i])
		}
	}
}

func TestLayerSwitchDropsBadBody(t *testing.T) {
	_, err := layerSwitchDrops([]byte(`{"error": "nope"}`), []string{"r1.f1.m1."}, [3]uint8{34, 36, 38})
	if err == nil || !strings.Contains(err.Error(), "the controller's switches") {
		t.Fatalf("err %v, want one naming the controller's switches", err)
	}
}

package sfuflow

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/strata-rtc/strata/internal/netctl/api"
)

// streamPrefix is how the controller's subscription ids of a publisher's video begin: the
// videoroom names a stream r<room>.f<feed>.m<mid> and its subscriptions after it.
func streamPrefix(room, feed uint64) string {
	return fmt.Sprintf("r%d.f%d.m%s.", room, feed, videoMid)
}

// layerSwitchDrops are, per stream prefix, the packets of each temporal layer (by its mark) that the
// switches dropped on the controller's drop flows for that stream's subscriptions. switches is
// GET /v1/switches's body.
func layerSwitchDrops(switches []byte, prefixes []string, marks [3]uint8) ([][3]int64, error) {
	var sw []api.Switch
	if err := json.Unmarshal(switches, &sw); err != nil {
		return nil, fmt.Errorf("sfuflow: the controller's switches: %w", err)
	}
	out := make([][3]int64, len(prefixes))
	for _, s := range sw {
		for _, f := range s.Flows {
			if f.Action != "drop" {
				continue
			}
			for i, p := range prefixes {
				if p == "" || !strings.HasPrefix(f.Subscription, p) {
					continue
				}
				for l, m := range marks {
					if f.DSCP == int(m) {
						out[i][l] += int64(f.Packets)
					}
				}
			}
		}
	}
	return out, nil
}

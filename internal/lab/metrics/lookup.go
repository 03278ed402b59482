package metrics

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Lookup returns the summary value at a dotted path of summary.json field
// names, with list items chosen by name: "jain_index",
// "flows.nada.fair_share_ratio", "flows.nada.queue_delay_ms.p95",
// "links.bottleneck.utilization". A flow name that matches no flow but
// prefixes several ("tcp" for tcp-1, tcp-2, ...) gives their mean.
func Lookup(s Summary, path string) (float64, error) {
	data, err := json.Marshal(s)
	if err != nil {
		return 0, err
	}
	var root any
	if err := json.Unmarshal(data, &root); err != nil {
		return 0, err
	}
	return lookup(root, strings.Split(path, "."), path)
}

func lookup(node any, segs []string, path string) (float64, error) {
	if len(segs) == 0 {
		switch v := node.(type) {
		case float64:
			return v, nil
		case nil:
			return 0, fmt.Errorf("%s has no value in this run", path)
		}
		return 0, fmt.Errorf("%s is not a number", path)
	}
	seg := segs[0]
	switch v := node.(type) {
	case map[string]any:
		child, ok := v[seg]
		if !ok {
			return 0, fmt.Errorf("%s: no field %q", path, seg)
		}
		return lookup(child, segs[1:], path)
	case []any:
		var group []any
		for _, item := range v {
			m, _ := item.(map[string]any)
			name, _ := m["name"].(string)
			if name == seg {
				return lookup(item, segs[1:], path)
			}
			if strings.HasPrefix(name, seg+"-") {
				group = append(group, item)
			}
		}
		if len(group) == 0 {
			return 0, fmt.Errorf("%s: nothing named %q", path, seg)
		}
		sum := 0.0
		for _, item := range group {
			x, err := lookup(item, segs[1:], path)
			if err != nil {
				return 0, err
			}
			sum += x
		}
		return sum / float64(len(group)), nil
	}
	return 0, fmt.Errorf("%s: %q is not a list or object", path, seg)
}

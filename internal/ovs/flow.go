package ovs

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Flow is one flow as ovs-ofctl dump-flows prints it.
type Flow struct {
	Cookie   uint64
	Table    int
	Priority int
	// Match is the match in OVS's canonical form (which may differ from how the flow was added:
	// ip_dscp=34 reads back as nw_tos=136, fields in OVS's order); empty matches everything.
	Match   string
	Actions string
	Packets uint64
	Bytes   uint64
	// Duration is how long the flow has been installed.
	Duration time.Duration
}

// DefaultPriority is OpenFlow's priority of a flow added without one (dump-flows omits it).
const DefaultPriority = 32768

// maxDumpLines bounds what ParseFlows reads (a switch with more flows than this is not ours).
const maxDumpLines = 1 << 20

// ParseFlows parses the output of `ovs-ofctl dump-flows` (any OpenFlow version): a reply header
// line, then one flow per line, e.g.
//
//	cookie=0x5, duration=1.5s, table=0, n_packets=3, n_bytes=180, priority=100,udp,nw_tos=152 actions=drop
//
// Header lines and blank lines are skipped; a flow line that does not parse is an error naming it.
func ParseFlows(out string) ([]Flow, error) {
	var flows []Flow
	for i, line := range strings.Split(out, "\n") {
		if i >= maxDumpLines {
			return nil, fmt.Errorf("ovs: dump of more than %d lines", maxDumpLines)
		}
		line = strings.TrimSpace(line)
		if line == "" || isHeader(line) {
			continue
		}
		f, err := ParseFlow(line)
		if err != nil {
			return nil, fmt.Errorf("ovs: dump line %d: %w", i+1, err)
		}
		flows = append(flows, f)
	}
	return flows, nil
}

// isHeader recognises reply headers such as "NXST_FLOW reply (xid=0x4):" and
// "OFPST_FLOW reply (OF1.4) (xid=0x2):".
func isHeader(line string) bool {
	return strings.HasSuffix(line, ":") && strings.Contains(line, " reply")
}

// ParseFlow parses one line of dump-flows.
func ParseFlow(line string) (Flow, error) {
	f := Flow{Priority: DefaultPriority}
	head, actions, ok := strings.Cut(line, " actions=")
	if !ok {
		if !strings.HasPrefix(line, "actions=") {
			return Flow{}, fmt.Errorf("no actions in %q", clip(line))
		}
		head, actions = "", strings.TrimPrefix(line, "actions=")
	}
	f.Actions = strings.TrimSpace(actions)
	if f.Actions == "" {
		return Flow{}, fmt.Errorf("empty actions in %q", clip(line))
	}
	var match []string
	// Flags stand before the match separated by a space, not a comma ("reset_counts priority=10,udp").
	for _, item := range strings.FieldsFunc(head, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' }) {
		key, val, _ := strings.Cut(item, "=")
		isStat, err := f.setStat(key, val)
		if err != nil {
			return Flow{}, fmt.Errorf("%s in %q: %w", key, clip(line), err)
		}
		if !isStat {
			match = append(match, item)
		}
	}
	f.Match = strings.Join(match, ",")
	return f, nil
}

// setStat stores a statistics field (and the priority); it reports false for match fields.
func (f *Flow) setStat(key, val string) (bool, error) {
	var err error
	switch key {
	case "cookie":
		f.Cookie, err = strconv.ParseUint(val, 0, 64)
	case "table":
		f.Table, err = strconv.Atoi(val)
	case "priority":
		f.Priority, err = strconv.Atoi(val)
		if err == nil && (f.Priority < 0 || f.Priority > 65535) {
			err = fmt.Errorf("priority %d out of range", f.Priority)
		}
	case "n_packets":
		f.Packets, err = strconv.ParseUint(val, 10, 64)
	case "n_bytes":
		f.Bytes, err = strconv.ParseUint(val, 10, 64)
	case "duration":
		f.Duration, err = parseSeconds(val)
	case "idle_age", "hard_age", "idle_timeout", "hard_timeout", "importance", "send_flow_rem",
		"reset_counts", "no_packet_counts", "no_byte_counts", "check_overlap", "out_port", "out_group":
		// Flow attributes that are not part of the match.
	default:
		return false, nil
	}
	return true, err
}

// parseSeconds parses OVS's "1.234s".
func parseSeconds(val string) (time.Duration, error) {
	secs, err := strconv.ParseFloat(strings.TrimSuffix(val, "s"), 64)
	if err == nil && !(secs >= 0 && secs <= 1e9) { // NaN too
		return 0, fmt.Errorf("duration %q out of range", val)
	}
	return time.Duration(secs * float64(time.Second)), err
}

func clip(s string) string {
	if len(s) > 120 {
		return s[:120] + "..."
	}
	return s
}

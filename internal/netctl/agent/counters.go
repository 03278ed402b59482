package agent

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/strata-rtc/strata/cc"
)

// Counters are an interface's byte counters.
type Counters struct {
	RxBytes, TxBytes uint64
}

// Reader reads interface counters from Linux: /sys/class/net/IFACE/statistics/{rx,tx}_bytes, or
// /proc/net/dev when sysfs is not there (some containers).
type Reader struct {
	SysfsRoot  string // default /sys/class/net
	ProcNetDev string // default /proc/net/dev
}

// Read returns the counters of the named interfaces, or of every interface but lo when names is
// empty.
func (r Reader) Read(names []string) (map[string]Counters, error) {
	sys, proc := r.SysfsRoot, r.ProcNetDev
	if sys == "" {
		sys = "/sys/class/net"
	}
	if proc == "" {
		proc = "/proc/net/dev"
	}
	if _, err := os.Stat(sys); err == nil {
		return readSysfs(sys, names)
	}
	data, err := os.ReadFile(proc)
	if err != nil {
		return nil, fmt.Errorf("no interface counters: neither %s nor %s is readable: %v", sys, proc, err)
	}
	all, err := ParseProcNetDev(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", proc, err)
	}
	return pick(all, names)
}

func readSysfs(root string, names []string) (map[string]Counters, error) {
	if len(names) == 0 {
		entries, err := os.ReadDir(root)
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			if e.Name() != "lo" {
				names = append(names, e.Name())
			}
		}
	}
	out := make(map[string]Counters, len(names))
	for _, n := range names {
		if n == "" || strings.ContainsAny(n, "/\x00") || n == "." || n == ".." {
			return nil, fmt.Errorf("bad interface name %q", n)
		}
		rx, err := readUint(filepath.Join(root, n, "statistics", "rx_bytes"))
		if err != nil {
			return nil, fmt.Errorf("interface %s: %v", n, err)
		}
		tx, err := readUint(filepath.Join(root, n, "statistics", "tx_bytes"))
		if err != nil {
			return nil, fmt.Errorf("interface %s: %v", n, err)
		}
		out[n] = Counters{RxBytes: rx, TxBytes: tx}
	}
	return out, nil
}

func readUint(path string) (uint64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	return strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
}

// pick keeps the named interfaces (all but lo when names is empty).
func pick(all map[string]Counters, names []string) (map[string]Counters, error) {
	if len(names) == 0 {
		delete(all, "lo")
		return all, nil
	}
	out := make(map[string]Counters, len(names))
	for _, n := range names {
		c, ok := all[n]
		if !ok {
			return nil, fmt.Errorf("no interface %q", n)
		}
		out[n] = c
	}
	return out, nil
}

// ParseProcNetDev parses /proc/net/dev: two header lines, then "iface: rx_bytes rx_packets ...
// (8 receive fields) tx_bytes ...". Only the byte counters are kept.
func ParseProcNetDev(data []byte) (map[string]Counters, error) {
	out := map[string]Counters{}
	lines := bytes.Split(data, []byte{'\n'})
	for i, line := range lines {
		name, rest, ok := bytes.Cut(line, []byte{':'})
		if !ok {
			if i >= 2 && len(bytes.TrimSpace(line)) > 0 {
				return nil, fmt.Errorf("line %d: no interface name", i+1)
			}
			continue // the two header lines (or the empty last line)
		}
		iface := string(bytes.TrimSpace(name))
		fields := strings.Fields(string(rest))
		if iface == "" || len(fields) < 9 {
			return nil, fmt.Errorf("line %d: want an interface name and at least 9 counters", i+1)
		}
		rx, err1 := strconv.ParseUint(fields[0], 10, 64)
		tx, err2 := strconv.ParseUint(fields[8], 10, 64)
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("line %d: counters are not numbers", i+1)
		}
		out[iface] = Counters{RxBytes: rx, TxBytes: tx}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no interfaces")
	}
	return out, nil
}

// Rates turns two readings dt apart into bit rates. An interface whose counters went backwards
// (the interface was reset, or a 32-bit counter wrapped) is left out of this round.
func Rates(prev, cur map[string]Counters, dt time.Duration) map[string][2]cc.Bitrate {
	out := make(map[string][2]cc.Bitrate, len(cur))
	if dt <= 0 {
		return out
	}
	for n, c := range cur {
		p, ok := prev[n]
		if !ok || c.TxBytes < p.TxBytes || c.RxBytes < p.RxBytes {
			continue
		}
		tx := cc.BitrateFromFloat(float64(c.TxBytes-p.TxBytes) * 8 / dt.Seconds())
		rx := cc.BitrateFromFloat(float64(c.RxBytes-p.RxBytes) * 8 / dt.Seconds())
		out[n] = [2]cc.Bitrate{tx, rx}
	}
	return out
}

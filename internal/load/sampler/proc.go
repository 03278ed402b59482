// Package sampler measures a process under load once a second from Linux's /proc: CPU time
// (user+system), resident memory and thread count from /proc/PID/stat, and the bytes and packets
// its network namespace moved from /proc/PID/net/dev. It can find a server's PID from the TCP port
// it listens on. The parsers take bytes, so they are tested (and fuzzed) without a live process.
package sampler

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// clockTicks is USER_HZ, the unit of utime/stime in /proc/PID/stat; it is 100 on every Linux
// architecture Go supports.
const clockTicks = 100

// ProcStat is what /proc/PID/stat says about a process.
type ProcStat struct {
	CPU      time.Duration // user + system time
	User     time.Duration
	System   time.Duration
	Threads  int
	RSSBytes int64
}

// ParseStat parses the contents of /proc/PID/stat. The command name is in parentheses and may
// itself contain spaces and parentheses, so fields are counted from the last ')'.
func ParseStat(b []byte) (ProcStat, error) {
	var st ProcStat
	end := bytes.LastIndexByte(b, ')')
	if end < 0 {
		return st, errors.New("sampler: stat without a command name")
	}
	fields := strings.Fields(string(b[end+1:]))
	// fields[0] is field 3 (state); utime is field 14, stime 15, num_threads 20, rss 24.
	const base = 3
	if len(fields) < 24-base+1 {
		return st, fmt.Errorf("sampler: stat has %d fields after the name", len(fields))
	}
	num := func(field int) (int64, error) {
		v, err := strconv.ParseInt(fields[field-base], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("sampler: stat field %d: %w", field, err)
		}
		return v, nil
	}
	utime, err1 := num(14)
	stime, err2 := num(15)
	threads, err3 := num(20)
	rss, err4 := num(24)
	if err := errors.Join(err1, err2, err3, err4); err != nil {
		return st, err
	}
	if utime < 0 || stime < 0 || utime > maxTicks || stime > maxTicks {
		return st, errors.New("sampler: CPU time in stat out of range")
	}
	st.User = ticks(utime)
	st.System = ticks(stime)
	st.CPU = st.User + st.System
	st.Threads = int(threads)
	st.RSSBytes = rss * int64(os.Getpagesize())
	return st, nil
}

func ticks(n int64) time.Duration { return time.Duration(n) * (time.Second / clockTicks) }

// maxTicks is the most CPU time a stat field may hold: a century, far beyond any process, and far
// within a time.Duration for the sum of two fields.
const maxTicks = 100 * 365 * 24 * 3600 * clockTicks

// ReadStat reads /proc/PID/stat.
func ReadStat(pid int) (ProcStat, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ProcStat{}, err
	}
	return ParseStat(b)
}

// NetCounters are one interface's (or a sum of interfaces') counters.
type NetCounters struct {
	RxBytes, RxPackets, TxBytes, TxPackets uint64
}

// Add sums counters.
func (c NetCounters) Add(o NetCounters) NetCounters {
	return NetCounters{c.RxBytes + o.RxBytes, c.RxPackets + o.RxPackets, c.TxBytes + o.TxBytes, c.TxPackets + o.TxPackets}
}

// ParseNetDev parses /proc/net/dev: per interface, received and transmitted bytes and packets.
func ParseNetDev(b []byte) (map[string]NetCounters, error) {
	out := map[string]NetCounters{}
	for i, line := range strings.Split(string(b), "\n") {
		if i < 2 || strings.TrimSpace(line) == "" {
			continue // two header lines
		}
		name, rest, ok := strings.Cut(line, ":")
		if !ok {
			return out, fmt.Errorf("sampler: net/dev line %d has no interface name", i+1)
		}
		f := strings.Fields(rest)
		if len(f) < 16 {
			return out, fmt.Errorf("sampler: net/dev line %d has %d fields", i+1, len(f))
		}
		var v [4]uint64
		for j, idx := range []int{0, 1, 8, 9} {
			n, err := strconv.ParseUint(f[idx], 10, 64)
			if err != nil {
				return out, fmt.Errorf("sampler: net/dev line %d: %w", i+1, err)
			}
			v[j] = n
		}
		out[strings.TrimSpace(name)] = NetCounters{RxBytes: v[0], RxPackets: v[1], TxBytes: v[2], TxPackets: v[3]}
	}
	return out, nil
}

// ReadNetDev reads the interface counters of PID's network namespace.
func ReadNetDev(pid int) (map[string]NetCounters, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/net/dev", pid))
	if err != nil {
		return nil, err
	}
	return ParseNetDev(b)
}

// SameNetNS reports whether PID shares this process's network namespace. Only a server in a
// namespace of its own has interface counters that measure it alone.
func SameNetNS(pid int) bool {
	a, err1 := os.Readlink(fmt.Sprintf("/proc/%d/ns/net", pid))
	b, err2 := os.Readlink("/proc/self/ns/net")
	return err1 != nil || err2 != nil || a == b
}

// ListeningInodes parses /proc/net/tcp or tcp6 and returns the socket inodes listening on port.
func ListeningInodes(b []byte, port int) []string {
	var out []string
	for i, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if i == 0 || len(f) < 10 || f[3] != "0A" { // 0A is TCP_LISTEN
			continue
		}
		_, hexPort, ok := strings.Cut(f[1], ":")
		if !ok {
			continue
		}
		if p, err := strconv.ParseUint(hexPort, 16, 16); err == nil && int(p) == port {
			out = append(out, f[9])
		}
	}
	return out
}

// FindPIDByPort returns the process listening on a TCP port in this network namespace.
func FindPIDByPort(port int) (int, error) {
	inodes := map[string]bool{}
	for _, file := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		if b, err := os.ReadFile(file); err == nil {
			for _, ino := range ListeningInodes(b, port) {
				inodes["socket:["+ino+"]"] = true
			}
		}
	}
	if len(inodes) == 0 {
		return 0, fmt.Errorf("sampler: nothing listens on TCP port %d here", port)
	}
	procs, _ := filepath.Glob("/proc/[0-9]*")
	for _, dir := range procs {
		fds, _ := os.ReadDir(filepath.Join(dir, "fd"))
		for _, fd := range fds {
			if link, err := os.Readlink(filepath.Join(dir, "fd", fd.Name())); err == nil && inodes[link] {
				return strconv.Atoi(filepath.Base(dir))
			}
		}
	}
	return 0, fmt.Errorf("sampler: no visible process owns the socket on TCP port %d", port)
}

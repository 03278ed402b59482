//go:build linux

// Package ovstest builds a small network around a real Open vSwitch for tests: a switch in its own
// namespace and hosts in theirs, each joined to the bridge by a veth. Tests that use it need root
// and Debian's openvswitch-switch; Require skips (with the reason) only when not root.
package ovstest

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/ovs"
)

// Require skips the test when not root and fails it when Open vSwitch is missing (make deps-test
// installs it).
func Require(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: the switch runs in network namespaces joined by veth pairs (CI runs as root)")
	}
	for _, tool := range []string{"ovs-vswitchd", "ovsdb-server", "ovsdb-tool", "ovs-vsctl", "ovs-ofctl", "ovs-appctl", "ethtool", "ip"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is needed: scripts/install-deps.sh test installs openvswitch-switch and ethtool", tool)
		}
	}
}

// Host is a namespace joined to the switch.
type Host struct {
	Namespace string
	Addr      netip.Addr
}

// Net is a switch and its hosts.
type Net struct {
	Switch *ovs.Switch
	Hosts  []Host
	nss    []string
}

var seq atomic.Int64

// prefix starts every namespace New creates; the test process's PID follows, so that reap can
// tell a dead run's namespaces (a test killed before its cleanup) from a live one's.
const prefix = "sov"

var nsName = regexp.MustCompile(`^` + prefix + `(\d+)-`)

// reap removes the namespaces of test processes that are gone (their OVS daemons died with them).
func reap() {
	entries, _ := os.ReadDir("/var/run/netns")
	for _, e := range entries {
		m := nsName.FindStringSubmatch(e.Name())
		if m == nil {
			continue
		}
		pid, _ := strconv.Atoi(m[1])
		if pid != os.Getpid() && syscall.Kill(pid, 0) == syscall.ESRCH {
			_ = run("ip", "netns", "del", e.Name())
		}
	}
}

// New starts a switch and n hosts (10.77.0.1, .2, ... and fd77::1, ::2, ... on one segment) and
// removes everything when the test ends.
func New(t testing.TB, n int) *Net {
	t.Helper()
	Require(t)
	reap()
	id := fmt.Sprintf("%s%d-%d", prefix, os.Getpid(), seq.Add(1))
	nw := &Net{}
	t.Cleanup(nw.close)
	swNS := id + "-sw"
	if err := nw.addNS(swNS); err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "ovs")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sw, err := ovs.Start(ctx, ovs.Config{Namespace: swNS, Dir: filepath.Join(dir, "sw")})
	if err != nil {
		t.Fatal(err)
	}
	nw.Switch = sw
	for i := 1; i <= n; i++ {
		h, err := nw.addHost(ctx, fmt.Sprintf("%s-h%d", id, i), swNS, i)
		if err != nil {
			t.Fatal(err)
		}
		nw.Hosts = append(nw.Hosts, h)
	}
	return nw
}

func (nw *Net) addNS(name string) error {
	if err := run("ip", "netns", "add", name); err != nil {
		return err
	}
	nw.nss = append(nw.nss, name)
	return run("ip", "-n", name, "link", "set", "lo", "up")
}

// addHost creates host i's namespace and its veth to the switch (port p<i>, host side eth0).
func (nw *Net) addHost(ctx context.Context, ns, swNS string, i int) (Host, error) {
	if err := nw.addNS(ns); err != nil {
		return Host{}, err
	}
	port := fmt.Sprintf("p%d", i)
	addr := netip.AddrFrom4([4]byte{10, 77, 0, byte(i)})
	steps := [][]string{
		{"ip", "link", "add", "eth0", "netns", ns, "type", "veth", "peer", "name", port, "netns", swNS},
		{"ip", "-n", ns, "addr", "add", addr.String() + "/24", "dev", "eth0"},
		{"ip", "-n", ns, "addr", "add", fmt.Sprintf("fd77::%d/64", i), "dev", "eth0", "nodad"},
		{"ip", "-n", ns, "link", "set", "eth0", "up"},
	}
	for _, s := range steps {
		if err := run(s...); err != nil {
			return Host{}, err
		}
	}
	if err := ovs.DisableTxOffload(ctx, ns, "eth0"); err != nil {
		return Host{}, err
	}
	if err := nw.Switch.AddPort(ctx, port); err != nil {
		return Host{}, err
	}
	return Host{Namespace: ns, Addr: addr}, nil
}

func (nw *Net) close() {
	if nw.Switch != nil {
		_ = nw.Switch.Close()
	}
	for _, ns := range nw.nss {
		_ = run("ip", "netns", "del", ns)
	}
}

func run(argv ...string) error {
	if out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput(); err != nil {
		return fmt.Errorf("%s: %v: %s", strings.Join(argv, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

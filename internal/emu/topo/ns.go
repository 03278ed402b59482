package topo

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"

	"github.com/strata-rtc/strata/internal/netns"
	"golang.org/x/sys/unix"
)

// netnsDir is where `ip netns` keeps its named namespaces.
const netnsDir = netns.Dir

// prefix starts every namespace an emulation creates; the pid that follows
// lets Reap tell a dead run's namespaces from a live one's.
const prefix = "se"

var nsName = regexp.MustCompile(`^` + prefix + `(\d+)-`)

// checkRoot says clearly why an emulation cannot run without root.
func checkRoot() error { return checkRootAs(os.Geteuid()) }

func checkRootAs(euid int) error {
	if euid != 0 {
		return errors.New("the network emulator needs root (it creates network namespaces, veth pairs and TUN devices): run as root")
	}
	if _, err := os.Stat("/dev/net/tun"); err != nil {
		return fmt.Errorf("the network emulator needs /dev/net/tun: %w", err)
	}
	return nil
}

// inNamespace runs f inside namespace name (netns.Do).
func inNamespace(name string, f func() error) error { return netns.Do(name, f) }

// sysctls writes net sysctls (path under /proc/sys/net → value) inside ns.
func sysctls(ns string, kv [][2]string) error {
	return inNamespace(ns, func() error {
		for _, p := range kv {
			if err := os.WriteFile("/proc/sys/net/"+p[0], []byte(p[1]), 0o644); err != nil {
				return fmt.Errorf("sysctl %s in %s: %w", p[0], ns, err)
			}
		}
		return nil
	})
}

// ipBatch runs ip commands (one per line, without "ip") inside ns.
func ipBatch(ns string, lines []string) error {
	if len(lines) == 0 {
		return nil
	}
	cmd := exec.Command("ip", "-n", ns, "-batch", "-")
	cmd.Stdin = strings.NewReader(strings.Join(lines, "\n") + "\n")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("ip -n %s -batch: %v: %s", ns, err, strings.TrimSpace(string(out)))
	}
	return nil
}

func ip(args ...string) error {
	if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
		return fmt.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// deleteNamespace kills what still runs inside ns (only processes of the
// emulation that made it can be there) and removes it, which takes its
// interfaces with it.
func deleteNamespace(ns string) error {
	if out, err := exec.Command("ip", "netns", "pids", ns).Output(); err == nil {
		for _, f := range bytes.Fields(out) {
			if pid, err := strconv.Atoi(string(f)); err == nil && pid != os.Getpid() {
				_ = unix.Kill(pid, unix.SIGKILL)
			}
		}
	}
	return ip("netns", "del", ns)
}

// Reap removes the namespaces of emulations whose process is gone (killed
// with SIGKILL, say), with anything still running inside them (their Open
// vSwitch daemons included), and their switches' directories.
func Reap() error {
	entries, err := os.ReadDir(netnsDir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	var errs []error
	for _, e := range entries {
		if !dead(e.Name()) {
			continue
		}
		if err := deleteNamespace(e.Name()); err != nil {
			errs = append(errs, err)
		}
	}
	// The switches' daemons died with their namespaces; their directories are left.
	errs = append(errs, reapSwitchDirs())
	return errors.Join(errs...)
}

// dead reports whether name (a namespace or a switch directory) belongs to an emulation whose
// process is gone: not ours, and its run is not alive.
func dead(name string) bool {
	m := nsName.FindStringSubmatch(name)
	if m == nil {
		return false
	}
	pid, _ := strconv.Atoi(m[1])
	return pid != os.Getpid() && unix.Kill(pid, 0) == unix.ESRCH
}

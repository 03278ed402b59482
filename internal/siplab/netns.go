package siplab

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"math/big"
	"net"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/strata-rtc/strata/internal/syncbuf"
)

// network is one lab's private network: a hub namespace holding a bridge, a namespace per
// component joined to the bridge by a veth pair, and one veth pair from the root namespace to the
// bridge, so that a server in the root namespace (strata under test) reaches every component at
// its own address. The bridge lives in the hub namespace, not in the root one, so the host's
// bridge-netfilter and firewall rules never see the lab's traffic.
//
// Names and the subnet are random per lab, so parallel runs and other users of the machine do not
// clash; only the root end of the root link has a name in the root namespace ("sl" + 6 hex digits).
type network struct {
	id      string // 6 hex digits
	prefix  string // "10.A.B." of the lab's /24
	hub     string // the hub namespace
	rootIf  string // the root namespace's end of its link to the bridge
	created []string
	rootUp  bool
	nextIP  int

	mu    sync.Mutex
	procs []*proc
}

// HostIP is the root namespace's address on the lab's subnet.
func (n *network) hostIP() string { return n.prefix + "1" }

func newNetwork() (*network, error) {
	if out, err := exec.Command("ip", "netns", "list").CombinedOutput(); err != nil {
		return nil, fmt.Errorf("siplab needs root and iproute2 to create network namespaces: ip netns list: %v: %s", err, bytes.TrimSpace(out))
	}
	b := make([]byte, 3)
	if _, err := rand.Read(b); err != nil {
		return nil, err
	}
	id := hex.EncodeToString(b)
	prefix, err := freeSubnet()
	if err != nil {
		return nil, err
	}
	n := &network{id: id, prefix: prefix, hub: "siplab-" + id + "-hub", rootIf: "sl" + id, nextIP: 10}
	if err := n.up(); err != nil {
		n.down()
		return nil, err
	}
	return n, nil
}

// freeSubnet picks a random 10.A.B.0/24 (A in 160..199) that no route of the root namespace
// covers, so the lab cannot shadow a network the machine uses.
func freeSubnet() (string, error) {
	out, err := exec.Command("ip", "-4", "route", "show", "table", "all").Output()
	if err != nil {
		return "", fmt.Errorf("ip route: %v", err)
	}
	var used []*net.IPNet
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		dst := f[0]
		if dst == "local" || dst == "broadcast" || dst == "unicast" {
			if len(f) < 2 {
				continue
			}
			dst = f[1]
		}
		if !strings.Contains(dst, "/") {
			dst += "/32"
		}
		if _, c, err := net.ParseCIDR(dst); err == nil && !c.IP.IsUnspecified() {
			used = append(used, c)
		}
	}
	for try := 0; try < 100; try++ {
		a, _ := rand.Int(rand.Reader, big.NewInt(40))
		b, _ := rand.Int(rand.Reader, big.NewInt(256))
		prefix := fmt.Sprintf("10.%d.%d.", 160+a.Int64(), b.Int64())
		_, mine, _ := net.ParseCIDR(prefix + "0/24")
		clash := false
		for _, u := range used {
			if u.Contains(mine.IP) || mine.Contains(u.IP) {
				clash = true
				break
			}
		}
		if !clash {
			return prefix, nil
		}
	}
	return "", fmt.Errorf("siplab: no free 10.160-199.x.0/24 subnet")
}

func (n *network) up() error {
	if err := n.addNetns(n.hub); err != nil {
		return err
	}
	steps := [][]string{
		{"-n", n.hub, "link", "set", "lo", "up"},
		{"-n", n.hub, "link", "add", "br0", "type", "bridge"},
		{"-n", n.hub, "link", "set", "br0", "up"},
		{"link", "add", n.rootIf, "type", "veth", "peer", "name", "root", "netns", n.hub},
	}
	if err := ipAll(steps); err != nil {
		return err
	}
	n.rootUp = true
	return ipAll([][]string{
		{"-n", n.hub, "link", "set", "root", "master", "br0"},
		{"-n", n.hub, "link", "set", "root", "up"},
		{"addr", "add", n.hostIP() + "/24", "dev", n.rootIf},
		{"link", "set", n.rootIf, "up"},
	})
}

// addComponent creates the namespace for one component, joins it to the bridge and returns its
// name and address.
func (n *network) addComponent(name string) (ns, addr string, err error) {
	ns = fmt.Sprintf("siplab-%s-%s", n.id, name)
	if err := n.addNetns(ns); err != nil {
		return "", "", err
	}
	n.mu.Lock()
	addr = fmt.Sprintf("%s%d", n.prefix, n.nextIP)
	port := fmt.Sprintf("p%d", n.nextIP)
	n.nextIP++
	n.mu.Unlock()
	err = ipAll([][]string{
		{"-n", n.hub, "link", "add", port, "type", "veth", "peer", "name", "eth0", "netns", ns},
		{"-n", n.hub, "link", "set", port, "master", "br0"},
		{"-n", n.hub, "link", "set", port, "up"},
		{"-n", ns, "link", "set", "lo", "up"},
		{"-n", ns, "addr", "add", addr + "/24", "dev", "eth0"},
		{"-n", ns, "link", "set", "eth0", "up"},
	})
	return ns, addr, err
}

func (n *network) addNetns(ns string) error {
	if err := ip("netns", "add", ns); err != nil {
		return err
	}
	n.mu.Lock()
	n.created = append(n.created, ns)
	n.mu.Unlock()
	return nil
}

// down stops the processes the lab started (by their PIDs) and deletes its namespaces and links.
// A namespace that still holds processes is left and reported: they are not ours to kill.
func (n *network) down() error {
	n.mu.Lock()
	procs := n.procs
	n.procs = nil
	n.mu.Unlock()
	for i := len(procs) - 1; i >= 0; i-- {
		procs[i].stop()
	}
	var errs []string
	for i := len(n.created) - 1; i >= 0; i-- {
		ns := n.created[i]
		if err := waitEmpty(ns); err != nil {
			errs = append(errs, err.Error())
			continue
		}
		if err := ip("netns", "del", ns); err != nil {
			errs = append(errs, err.Error())
		}
	}
	n.created = nil
	if n.rootUp {
		// Deleting the hub took the link's other end and with it the pair; this only reports.
		if _, err := net.InterfaceByName(n.rootIf); err == nil {
			if err := ip("link", "del", n.rootIf); err != nil {
				errs = append(errs, err.Error())
			}
		}
		n.rootUp = false
	}
	if len(errs) > 0 {
		return fmt.Errorf("siplab cleanup: %s", strings.Join(errs, "; "))
	}
	return nil
}

// waitEmpty gives a namespace's processes (a kamailio's children after their parent stopped) a
// moment to exit.
func waitEmpty(ns string) error {
	deadline := time.Now().Add(3 * time.Second)
	for {
		out, err := exec.Command("ip", "netns", "pids", ns).Output()
		if err != nil || len(bytes.TrimSpace(out)) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("namespace %s still has processes %s; not deleting it", ns, strings.Fields(string(out)))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// proc is a process the lab started inside a namespace, with its output kept for failure reports.
type proc struct {
	name string
	cmd  *exec.Cmd
	out  *syncbuf.Buffer
	done chan struct{}
}

// start runs argv inside namespace ns, and in a PID namespace of its own: `ip netns exec` execs
// unshare, whose PID we keep; unshare forks the program as that PID namespace's init and kills it
// when unshare dies, and when a PID namespace's init dies the kernel kills everything else in it
// (kamailio's children). The parent-death signal kills unshare if the test binary dies before
// cleaning up, so nothing the lab started outlives it.
func (n *network) start(name, ns string, argv ...string) (*proc, error) {
	args := append([]string{"netns", "exec", ns, "unshare", "--pid", "--kill-child=SIGKILL"}, argv...)
	cmd := exec.Command("ip", args...)
	out := &syncbuf.Buffer{}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("siplab: start %s: %v", name, err)
	}
	p := &proc{name: name, cmd: cmd, out: out, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(p.done) }()
	n.mu.Lock()
	n.procs = append(n.procs, p)
	n.mu.Unlock()
	return p, nil
}

func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// stop ends the process by its PID (unshare's, which ignores SIGTERM): SIGKILL, which takes the
// program and its PID namespace with it. None of the components keeps state worth a graceful
// shutdown.
func (p *proc) stop() {
	if p.exited() {
		return
	}
	_ = p.cmd.Process.Kill()
	<-p.done
}

// tail is the last 16 KiB of the process's output, for failure reports.
func (p *proc) tail() string { return p.out.Tail(16 << 10) }

func ipAll(steps [][]string) error {
	for _, s := range steps {
		if err := ip(s...); err != nil {
			return err
		}
	}
	return nil
}

func ip(args ...string) error {
	out, err := exec.Command("ip", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

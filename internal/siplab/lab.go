// Package siplab is a test rig of real SIP software from Debian, each component in its own
// network namespace: kamailio as registrar and proxy with digest authentication, baresip user
// agents that answer, play a tone and record what they hear, and sipp scenarios. Tests start a
// Lab, which is torn down (processes stopped by PID, namespaces and links deleted) when the test
// ends. It needs root (network namespaces); Start fails the test with a clear message otherwise.
//
// The components share a private /24 on a bridge; the root namespace has the address HostIP on
// it, so a server started by the test in the root namespace (strata) reaches them all and uses
// HostIP as its SIP and RTP address.
package siplab

import (
	"crypto/rand"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
)

// Options shape a lab.
type Options struct {
	// Users is how many SIP users the registrar knows (user1..userN with generated passwords);
	// 3 when zero.
	Users int
}

// User is a subscriber of the registrar.
type User struct {
	Name     string
	Password string
}

// Lab is a running registrar/proxy on a private network.
type Lab struct {
	Registrar string // kamailio's "ip:5060"
	Domain    string // the SIP domain users register in (kamailio's address)
	HostIP    string // the root namespace's address on the lab's network
	Users     []User

	t        testing.TB
	dir      string
	net      *network
	kamailio *proc
	uas      atomic.Int32 // components started, for their names
}

// Start creates the lab's network and starts kamailio. Everything is removed when t ends.
func Start(t testing.TB, opts Options) *Lab {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Fatalf("siplab: the SIP tests run kamailio, baresip and sipp in network namespaces and need root (euid %d); run them as root", os.Geteuid())
	}
	for _, bin := range []string{"kamailio", "baresip", "sipp", "ip", "ss"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Fatalf("siplab: %s not found: install the test dependencies (scripts/install-deps.sh test)", bin)
		}
	}
	n := opts.Users
	if n == 0 {
		n = 3
	}
	l := &Lab{t: t, dir: t.TempDir()}
	for i := 1; i <= n; i++ {
		l.Users = append(l.Users, User{Name: fmt.Sprintf("user%d", i), Password: randomSecret()})
	}
	nw, err := newNetwork()
	if err != nil {
		t.Fatalf("siplab: network: %v", err)
	}
	l.net = nw
	l.HostIP = nw.hostIP()
	t.Cleanup(func() {
		if t.Failed() && l.kamailio != nil {
			t.Logf("kamailio log:\n%s", l.kamailio.tail())
		}
		if err := nw.down(); err != nil {
			t.Errorf("%v", err)
		}
	})
	if err := l.startKamailio(); err != nil {
		t.Fatalf("siplab: kamailio: %v", err)
	}
	return l
}

// URI is user's address of record in the lab's domain.
func (l *Lab) URI(u User) string { return "sip:" + u.Name + "@" + l.Domain }

// KamailioLog is kamailio's output so far.
func (l *Lab) KamailioLog() string { return l.kamailio.tail() }

// randomSecret is a password of 12 hex digits.
func randomSecret() string {
	b := make([]byte, 6)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return fmt.Sprintf("%x", b)
}

// runIn runs a short command in namespace ns and returns its output.
func runIn(ns string, argv ...string) (string, error) {
	out, err := exec.Command("ip", append([]string{"netns", "exec", ns}, argv...)...).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("%s: %v: %s", strings.Join(argv, " "), err, out)
	}
	return string(out), nil
}

package siplab

import (
	"fmt"
	"strings"
	"time"
)

// Sipp is a sipp (package sip-tester) running a scenario in a namespace of its own, with SIP on
// IP:5060 and media on IP.
type Sipp struct {
	IP   string
	proc *proc
}

// StartSipp runs sipp with args (a scenario: -sn uas, -sf file.xml, -m calls, a remote host...)
// in a new namespace named after name; the lab adds the local address (-i, -mi), port 5060,
// -bind_local and -nostdin. The test fails if sipp cannot start.
func (l *Lab) StartSipp(name string, args ...string) *Sipp {
	l.t.Helper()
	ns, addr, err := l.net.addComponent(name)
	if err != nil {
		l.t.Fatalf("siplab: sipp %s: %v", name, err)
	}
	argv := append([]string{"sipp", "-i", addr, "-mi", addr, "-p", "5060", "-bind_local", "-nostdin"}, args...)
	p, err := l.net.start("sipp "+name, ns, argv...)
	if err != nil {
		l.t.Fatalf("siplab: %v", err)
	}
	s := &Sipp{IP: addr, proc: p}
	l.t.Cleanup(func() {
		if l.t.Failed() {
			l.t.Logf("sipp %s output:\n%s", name, s.Log())
		}
	})
	if strings.Contains(strings.Join(args, " "), "-sn uas") || !hasRemote(args) {
		if err := waitUDPService(p, ns, 5060, 5*time.Second); err != nil {
			l.t.Fatalf("siplab: %v", err)
		}
	}
	return s
}

// StartEchoUAS runs sipp's built-in UAS with RTP echo: it answers calls to any user at
// sip:…@IP:5060 (with PCMU), sends back the RTP it receives, and exits after calls calls.
func (l *Lab) StartEchoUAS(name string, calls int) *Sipp {
	l.t.Helper()
	return l.StartSipp(name, "-sn", "uas", "-rtp_echo", "-mp", "6000", "-m", fmt.Sprint(calls))
}

// hasRemote reports whether sipp's arguments name a remote host (a UAC scenario).
func hasRemote(args []string) bool {
	for i := 0; i < len(args); i++ {
		if strings.HasPrefix(args[i], "-") {
			i++ // every sipp option here takes a value
			continue
		}
		return true
	}
	return false
}

// Wait waits for sipp to exit: nil when it exits with status 0 (every call succeeded).
func (s *Sipp) Wait(timeout time.Duration) error {
	select {
	case <-s.proc.done:
	case <-time.After(timeout):
		return fmt.Errorf("sipp still running after %v", timeout)
	}
	if code := s.proc.cmd.ProcessState.ExitCode(); code != 0 {
		return fmt.Errorf("sipp exited with status %d", code)
	}
	return nil
}

// Log is sipp's output so far (its final statistics screen once it has exited).
func (s *Sipp) Log() string { return s.proc.tail() }

// URI is a SIP address at sipp for user.
func (s *Sipp) URI(user string) string { return "sip:" + user + "@" + s.IP }

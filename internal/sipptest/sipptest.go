// Package sipptest runs sipp (Debian's sip-tester), the real SIP peer of the SIP gateway's and
// the RTP bridge's tests, on loopback: on free ports, in a temporary directory, killed when the
// test ends, with what it said shown when the test fails.
//
// A port found free may be taken by another process before sipp binds it; sipp then exits at once
// ("Unable to bind"), and Start runs it again on other ports. Whether sipp listens is read from
// the kernel's socket tables and sipp's descriptors: probing a port by binding it would race
// sipp's own bind, and a port someone holds need not be sipp's.
package sipptest

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Sipp is one running sipp.
type Sipp struct {
	// Port is its SIP port on 127.0.0.1; MediaPort its RTP port (it binds MediaPort+2 as well).
	Port, MediaPort int
	// Done gets its exit: nil, or an error with its error log.
	Done <-chan error
}

// attempts bounds how often Start tries fresh ports.
const attempts = 5

// Start runs sipp with args (the scenario: -sf FILE, a file of ./testdata when it ends in .xml,
// or -sn NAME; and its options) and -i, -p, -mi, -mp of its own. Unless args set -timeout, sipp
// gives up after 25 s. It returns once sipp listens on its SIP port (TCP with -t t1) and, with
// -rtp_echo, on its media port.
func Start(t testing.TB, args ...string) *Sipp {
	t.Helper()
	bin, err := exec.LookPath("sipp")
	if err != nil {
		t.Fatal("sipp is not installed (Debian package sip-tester)")
	}
	args = slices.Clone(args)
	for i, a := range args {
		if filepath.Ext(a) == ".xml" {
			args[i], _ = filepath.Abs(filepath.Join("testdata", a))
		}
	}
	if !slices.Contains(args, "-timeout") {
		args = append(args, "-timeout", "25s", "-timeout_error")
	}
	tcp, echo := slices.Contains(args, "t1"), slices.Contains(args, "-rtp_echo")
	for attempt := 1; attempt <= attempts; attempt++ {
		s, err := start(t, bin, tcp, echo, args, FreeUDPPort(t), FreeMediaPort(t))
		if err == nil {
			return s
		}
		t.Logf("sipp, attempt %d: %v", attempt, err)
	}
	t.Fatal("sipp did not start")
	return nil
}

// errBindRace says sipp could not bind a port that was free a moment before.
var errBindRace = errors.New("a port was taken before sipp bound it")

// start runs one sipp on these ports and waits until it listens (and, with echo, until its RTP
// echo has bound the media port).
func start(t testing.TB, bin string, tcp, echo bool, args []string, port, media int) (*Sipp, error) {
	t.Helper()
	s := &Sipp{Port: port, MediaPort: media}
	argv := append([]string{"-i", "127.0.0.1", "-p", strconv.Itoa(s.Port), "-mi", "127.0.0.1", "-mp", strconv.Itoa(s.MediaPort),
		"-nostdin", "-trace_err", "-trace_msg"}, args...)
	cmd := exec.Command(bin, argv...)
	cmd.Dir = t.TempDir()
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	exited := make(chan struct{})
	go func() {
		err := cmd.Wait()
		close(exited)
		if err != nil {
			err = errors.New(err.Error() + ": " + readLog(cmd.Dir, "*_errors.log", 4000))
		}
		done <- err
	}()
	s.Done = done
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		select {
		case <-exited:
			if strings.Contains(readLog(cmd.Dir, "*_errors.log", 4000)+out.String(), "Unable to bind") {
				return nil, errBindRace
			}
			t.Fatalf("sipp %v exited at start: %v\n%s", argv, <-done, tail(out.String(), 2000))
		default:
		}
		pid := cmd.Process.Pid
		if Listening(pid, s.Port, tcp) && (!echo || Listening(pid, s.MediaPort, false)) {
			t.Cleanup(func() {
				_ = cmd.Process.Kill()
				<-exited
				if t.Failed() { // what sipp received and sent, to see who is wrong
					t.Logf("sipp %v:\n%s\n%s", argv, readLog(cmd.Dir, "*_messages.log", 4000), tail(out.String(), 1000))
				}
			})
			return s, nil
		}
	}
	_ = cmd.Process.Kill()
	<-exited
	return nil, fmt.Errorf("sipp %v did not listen within 5 s:\n%s", argv, tail(out.String(), 2000))
}

// Wait waits for sipp to finish, at most within, and fails the test if it failed.
func (s *Sipp) Wait(t testing.TB, within time.Duration) {
	t.Helper()
	select {
	case err := <-s.Done:
		if err != nil {
			t.Fatalf("sipp: %v", err)
		}
	case <-time.After(within):
		t.Fatal("sipp did not finish")
	}
}

// FreeUDPPort is a UDP port of loopback that was free a moment ago.
func FreeUDPPort(t testing.TB) int {
	t.Helper()
	c, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	return c.LocalAddr().(*net.UDPAddr).Port
}

// FreeMediaPort is an even UDP port of loopback that was free a moment ago (sipp binds the port
// and the one two above it).
func FreeMediaPort(t testing.TB) int {
	t.Helper()
	for range 50 {
		if p := FreeUDPPort(t); p%2 == 0 && p < 65000 {
			return p
		}
	}
	t.Fatal("no free even port")
	return 0
}

// Listening says whether a socket of process pid (any process when pid is 0) is bound to port on
// loopback (UDP) or listens on it (TCP), from the kernel's socket tables and pid's descriptors:
// that a port is taken does not say that sipp took it.
func Listening(pid, port int, tcp bool) bool {
	inodes := socketInodes(port, tcp)
	if len(inodes) == 0 || pid == 0 {
		return len(inodes) > 0
	}
	dir := "/proc/" + strconv.Itoa(pid) + "/fd"
	fds, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, fd := range fds {
		link, err := os.Readlink(filepath.Join(dir, fd.Name()))
		if err == nil && slices.Contains(inodes, strings.TrimSuffix(strings.TrimPrefix(link, "socket:["), "]")) {
			return true
		}
	}
	return false
}

// socketInodes are the inodes of the sockets bound to (UDP) or listening on (TCP) port of
// 127.0.0.1, from /proc/net/udp or /proc/net/tcp.
func socketInodes(port int, tcp bool) []string {
	table, state := "/proc/net/udp", ""
	if tcp {
		table, state = "/proc/net/tcp", "0A" // TCP_LISTEN
	}
	f, err := os.Open(table)
	if err != nil {
		return nil
	}
	defer f.Close()
	local := fmt.Sprintf("0100007F:%04X", port)
	var inodes []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) > 9 && fields[1] == local && (state == "" || fields[3] == state) {
			inodes = append(inodes, fields[9])
		}
	}
	return inodes
}

// readLog is the end (at most n bytes) of sipp's first log matching pattern in dir.
func readLog(dir, pattern string, n int) string {
	m, _ := filepath.Glob(filepath.Join(dir, pattern))
	if len(m) == 0 {
		return ""
	}
	b, _ := os.ReadFile(m[0])
	return tail(string(b), n)
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

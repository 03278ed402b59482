package sipptest

import (
	"errors"
	"net"
	"os"
	"os/exec"
	"testing"
	"time"
)

// TestListeningReadsTheSocketTables: a bound UDP port and a listening TCP port are seen, and as
// this process's; a closed one is not.
func TestListeningReadsTheSocketTables(t *testing.T) {
	u, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	port := u.LocalAddr().(*net.UDPAddr).Port
	if !Listening(0, port, false) || !Listening(os.Getpid(), port, false) {
		t.Fatalf("UDP port %d bound but not seen", port)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	tport := l.Addr().(*net.TCPAddr).Port
	if !Listening(os.Getpid(), tport, true) {
		t.Fatalf("TCP port %d listening but not seen", tport)
	}
	l.Close()
	if Listening(0, tport, true) {
		t.Fatalf("TCP port %d seen listening after close", tport)
	}
}

// TestStartAndWait: sipp's built-in UAS answers nothing here and exits at its timeout with an
// error, which Done reports; it listened on its UDP port meanwhile.
func TestStartAndWait(t *testing.T) {
	s := Start(t, "-sn", "uas", "-m", "1", "-timeout", "1s", "-timeout_error")
	if !Listening(0, s.Port, false) || Listening(os.Getpid(), s.Port, false) {
		t.Fatalf("sipp not listening on %d", s.Port)
	}
	if s.MediaPort%2 != 0 {
		t.Fatalf("media port %d is odd", s.MediaPort)
	}
	select {
	case err := <-s.Done:
		if err == nil {
			t.Fatal("sipp timed out without a call and reported success")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("sipp did not exit at its timeout")
	}
}

// TestABindRaceIsToldApart: sipp on a port another process holds exits at once saying it cannot
// bind; start reports that as the race Start retries, not as a failure of the test.
func TestABindRaceIsToldApart(t *testing.T) {
	held, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	port := held.LocalAddr().(*net.UDPAddr).Port
	bin, err := exec.LookPath("sipp")
	if err != nil {
		t.Fatal("sipp is not installed (Debian package sip-tester)")
	}
	if _, err := start(t, bin, false, false, []string{"-sn", "uas", "-m", "1"}, port, FreeMediaPort(t)); !errors.Is(err, errBindRace) {
		t.Fatalf("start on a held port: %v, want the bind race", err)
	}
}

package sip_test

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// runSipp starts sipp on a free port of loopback with args (scenario files from testdata), its
// media on another free port (sipp's default, 6000, may be another test's), in a temporary
// directory, killed when the test ends; done gets its exit. A failed test shows what sipp said.
//
// A port found free can be taken by another process before sipp binds it; sipp then exits at once
// saying so, and runSipp starts it again on other ports.
func runSipp(t *testing.T, args ...string) (int, chan error) {
	t.Helper()
	bin, err := exec.LookPath("sipp")
	if err != nil {
		t.Fatal("sipp is not installed (Debian package sip-tester)")
	}
	tcp := false
	for i, a := range args {
		if filepath.Ext(a) == ".xml" {
			args[i], _ = filepath.Abs(filepath.Join("testdata", a))
		}
		tcp = tcp || a == "t1"
	}
	for attempt := 0; attempt < 5; attempt++ {
		port, done, err := startSipp(t, bin, tcp, args)
		if err == nil {
			return port, done
		}
		t.Logf("sipp attempt %d: %v", attempt+1, err)
	}
	t.Fatal("sipp did not start")
	return 0, nil
}

// errBindRace says sipp could not bind a port that was free a moment before.
var errBindRace = errors.New("sipp could not bind its ports")

// startSipp starts one sipp with fresh ports and waits until it listens.
func startSipp(t *testing.T, bin string, tcp bool, args []string) (int, chan error, error) {
	t.Helper()
	port := freePort(t)
	full := append([]string{"-i", "127.0.0.1", "-p", strconv.Itoa(port), "-m", "1", "-timeout", "25s",
		"-timeout_error", "-nostdin", "-trace_err", "-trace_msg", "-mi", "127.0.0.1", "-mp", strconv.Itoa(freePort(t))}, args...)
	cmd := exec.Command(bin, full...)
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
			err = errors.New(err.Error() + ": " + sippErrors(cmd.Dir))
		}
		done <- err
	}()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		select {
		case <-exited:
			if strings.Contains(sippErrors(cmd.Dir)+out.String(), "Unable to bind") {
				return 0, nil, errBindRace
			}
			t.Fatalf("sipp %v exited at start: %v\n%s", full, <-done, tail(out.String(), 2000))
		default:
		}
		if listening(port, tcp) {
			t.Cleanup(func() {
				_ = cmd.Process.Kill()
				<-exited
				if t.Failed() {
					t.Logf("sipp %v:\n%s\n%s", full, sippErrors(cmd.Dir), tail(out.String(), 2000))
				}
			})
			return port, done, nil
		}
	}
	_ = cmd.Process.Kill()
	<-exited
	return 0, nil, fmt.Errorf("sipp %v did not listen within 5 s:\n%s", full, tail(out.String(), 2000))
}

// freePort is a UDP port of loopback that was free a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	c, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	return c.LocalAddr().(*net.UDPAddr).Port
}

// listening says whether a socket of this machine is bound to port on loopback (UDP) or listens
// on it (TCP), from the kernel's socket tables: probing by binding the port would race with sipp
// binding it.
func listening(port int, tcp bool) bool {
	table, state := "/proc/net/udp", ""
	if tcp {
		table, state = "/proc/net/tcp", "0A" // TCP_LISTEN
	}
	f, err := os.Open(table)
	if err != nil {
		return false
	}
	defer f.Close()
	local := fmt.Sprintf("0100007F:%04X", port)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) > 3 && fields[1] == local && (state == "" || fields[3] == state) {
			return true
		}
	}
	return false
}

// sippErrors is sipp's error log (-trace_err) in dir.
func sippErrors(dir string) string {
	m, _ := filepath.Glob(filepath.Join(dir, "*_errors.log"))
	if os.Getenv("SIPP_TRACE") != "" {
		m, _ = filepath.Glob(filepath.Join(dir, "*_messages.log"))
	}
	if len(m) == 0 {
		return ""
	}
	b, _ := os.ReadFile(m[0])
	return string(b)
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

func waitSippDone(t *testing.T, done chan error) {
	t.Helper()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("sipp: %v", err)
		}
	case <-time.After(25 * time.Second):
		t.Fatal("sipp did not finish")
	}
}

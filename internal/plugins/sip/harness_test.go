package sip

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/config"
	"github.com/strata-rtc/strata/internal/peer"
	"github.com/strata-rtc/strata/internal/plugin"
)

// event is one event a handle pushed.
type event struct {
	tx   string
	data map[string]any
	jsep *plugin.JSEP
}

// testHandle is the gateway's side of a handle for tests of the signalling alone: it records the
// events; it has no PeerConnection.
type testHandle struct{ events chan event }

func (h *testHandle) ID() uint64        { return 1 }
func (h *testHandle) SessionID() uint64 { return 1 }
func (h *testHandle) OpaqueID() string  { return "" }
func (h *testHandle) PushEvent(tx string, data any, jsep *plugin.JSEP) error {
	raw, _ := json.Marshal(data)
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	h.events <- event{tx, m, jsep}
	return nil
}
func (h *testHandle) Peer(...peer.PeerOption) (*peer.Peer, error) {
	return nil, errors.New("no media in this test")
}
func (h *testHandle) ClosePeer(string)     {}
func (h *testHandle) Logger() *slog.Logger { return testLogger() }

func testLogger() *slog.Logger {
	if os.Getenv("STRATA_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.DiscardHandler)
}

// testConfig is plugins.sip on loopback with any free ports.
func testConfig() config.SIP {
	c := config.Default().Plugins.SIP
	c.LocalIP, c.RTPPortRange, c.KeepaliveInterval = "127.0.0.1", "", 0
	c.RecordingsDir = os.TempDir()
	return c
}

// attach creates a plugin and a handle on it, both gone at the end of the test.
func attach(t *testing.T) (*Plugin, *session, *testHandle) {
	t.Helper()
	p := New(testConfig(), testLogger())
	h := &testHandle{events: make(chan event, 64)}
	ps, err := p.Attach(h)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Destroy)
	return p, ps.(*session), h
}

// send sends a request to the handle.
func send(s *session, tx string, body any) plugin.Result {
	raw, _ := json.Marshal(body)
	return s.HandleMessage(context.Background(), plugin.Message{Transaction: tx, Body: raw})
}

// next waits for the handle's next event.
func (h *testHandle) next(t *testing.T) event {
	t.Helper()
	select {
	case e := <-h.events:
		return e
	case <-time.After(15 * time.Second):
		t.Fatal("no event in 15 s")
	}
	return event{}
}

// result is an event's result.event (or "error <code>").
func (e event) result() string {
	if code, ok := e.data["error_code"]; ok {
		return "error " + strconv.Itoa(int(code.(float64)))
	}
	if r, ok := e.data["result"].(map[string]any); ok {
		s, _ := r["event"].(string)
		return s
	}
	return ""
}

func (e event) field(name string) any {
	r, _ := e.data["result"].(map[string]any)
	return r[name]
}

// freeUDPPort is a UDP port free on loopback now (sipp takes its ports from its command line).
func freeUDPPort(t *testing.T) int {
	t.Helper()
	c, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	return c.LocalAddr().(*net.UDPAddr).Port
}

// sipp runs sipp with the scenario file (testdata) or built-in scenario and args, in a temporary
// directory; the returned channel gets its exit error. It is killed at the end of the test.
func sipp(t *testing.T, args ...string) (port int, done chan error) {
	t.Helper()
	bin, err := exec.LookPath("sipp")
	if err != nil {
		t.Fatal("sipp is not installed (Debian package sip-tester)")
	}
	port = freeUDPPort(t)
	for i, a := range args {
		if filepath.Ext(a) == ".xml" {
			abs, _ := filepath.Abs(filepath.Join("testdata", a))
			args[i] = abs
		}
	}
	all := append([]string{"-i", "127.0.0.1", "-p", strconv.Itoa(port), "-m", "1", "-timeout", "25s", "-timeout_error",
		"-nostdin", "-trace_err", "-trace_msg", "-mp", strconv.Itoa(freeUDPPort(t))}, args...)
	cmd := exec.Command(bin, all...)
	cmd.Dir = t.TempDir()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done = make(chan error, 1)
	go func() {
		err := cmd.Wait()
		if err != nil {
			if log, _ := os.ReadFile(firstMatch(cmd.Dir, "*_errors.log")); len(log) > 0 {
				err = errors.New(err.Error() + ": " + string(log))
			}
		}
		done <- err
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		if t.Failed() { // what sipp received and sent, to see who is wrong
			msgs, _ := os.ReadFile(firstMatch(cmd.Dir, "*_messages.log"))
			if len(msgs) > 4000 {
				msgs = msgs[len(msgs)-4000:]
			}
			t.Logf("sipp %v:\n%s", args, msgs)
		}
	})
	waitBound(t, port)
	return port, done
}

func firstMatch(dir, pattern string) string {
	m, _ := filepath.Glob(filepath.Join(dir, pattern))
	if len(m) == 0 {
		return ""
	}
	return m[0]
}

// waitSipp waits for sipp to finish and fails the test if it failed.
func waitSipp(t *testing.T, done chan error) {
	t.Helper()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("sipp: %v", err)
		}
	case <-time.After(28 * time.Second):
		t.Fatal("sipp did not finish")
	}
}

// waitBound waits until something (sipp) has bound the UDP port on loopback.
func waitBound(t *testing.T, port int) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		c, err := net.ListenPacket("udp", "127.0.0.1:"+strconv.Itoa(port))
		if err != nil {
			return
		}
		_ = c.Close()
	}
	t.Fatalf("sipp did not bind port %d", port)
}

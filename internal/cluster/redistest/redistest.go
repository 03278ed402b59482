// Package redistest runs a real redis-server for a test: on a free port of 127.0.0.1 or on an
// address the test gives (a bridge address that nodes in network namespaces reach), without
// persistence, in the test's own directory, stopped by PID when the test ends.
package redistest

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Binary is the redis-server the tests run (Debian's package).
const Binary = "/usr/bin/redis-server"

// Server is one redis-server process (again after Restart).
type Server struct {
	t    testing.TB
	addr string
	dir  string

	mu   sync.Mutex
	cmd  *exec.Cmd
	exit chan struct{} // closed when cmd has been waited for
}

// Option changes how Start runs the server.
type Option func(*Server)

// Addr makes the server listen on addr ("host:port"; port 0: a free one on host) instead of a
// free port on 127.0.0.1.
func Addr(addr string) Option { return func(s *Server) { s.addr = addr } }

// Start runs a redis-server for t and stops it when t ends. It skips t when redis-server is not
// installed.
func Start(t testing.TB, opts ...Option) *Server {
	t.Helper()
	if _, err := os.Stat(Binary); err != nil {
		t.Skipf("redistest: %s not installed", Binary)
	}
	s := &Server{t: t, addr: "127.0.0.1:0", dir: t.TempDir()}
	for _, o := range opts {
		o(s)
	}
	host, port, err := net.SplitHostPort(s.addr)
	if err != nil {
		t.Fatalf("redistest: address %q: %v", s.addr, err)
	}
	if port == "0" {
		port = strconv.Itoa(freePort(t, host))
	}
	s.addr = net.JoinHostPort(host, port)
	t.Cleanup(s.Stop)
	if err := s.start(); err != nil {
		t.Fatal(err)
	}
	return s
}

// Addr is the server's "host:port".
func (s *Server) Addr() string { return s.addr }

// Restart kills the server (kill -9, as in a crash) and starts an empty one on the same address.
func (s *Server) Restart() {
	s.t.Helper()
	s.Stop()
	if err := s.start(); err != nil {
		s.t.Fatal(err)
	}
}

// Stop kills the server and waits for it; a stopped server can be started again with Restart.
func (s *Server) Stop() {
	s.mu.Lock()
	cmd, exit := s.cmd, s.exit
	s.cmd = nil
	s.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	<-exit
}

// Start starts a stopped server again (empty) on the same address.
func (s *Server) Start() {
	s.t.Helper()
	if err := s.start(); err != nil {
		s.t.Fatal(err)
	}
}

func (s *Server) start() error {
	host, port, _ := net.SplitHostPort(s.addr)
	cmd := exec.Command(Binary,
		"--bind", host, "--port", port, "--dir", s.dir,
		"--save", "", "--appendonly", "no", "--protected-mode", "no",
		"--daemonize", "no", "--logfile", filepath.Join(s.dir, "redis.log"))
	// Its own process group, so that a test's Ctrl-C does not leave it behind half-stopped; killed
	// with the test process if that dies without its cleanups (a test timeout).
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := spawn(cmd); err != nil {
		return fmt.Errorf("redistest: start %s: %w", Binary, err)
	}
	exit := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exit) }()
	s.mu.Lock()
	s.cmd, s.exit = cmd, exit
	s.mu.Unlock()
	// Ready when it accepts connections; a restart on the same port may have to wait for the
	// kernel to free it.
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-exit:
			log, _ := os.ReadFile(filepath.Join(s.dir, "redis.log"))
			return fmt.Errorf("redistest: redis-server on %s exited: %s", s.addr, log)
		default:
		}
		if c, err := net.DialTimeout("tcp", s.addr, 100*time.Millisecond); err == nil {
			_ = c.Close()
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	s.Stop()
	return fmt.Errorf("redistest: redis-server on %s did not accept connections within 10s", s.addr)
}

func freePort(t testing.TB, host string) int {
	l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		t.Fatalf("redistest: free port on %s: %v", host, err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// Pdeathsig follows the thread that forks, not the process: a thread that ends (one locked to a
// network namespace whose goroutine returned, say) would kill the server with it. The servers are
// forked from one thread that never ends: a goroutine locked to it for the life of the process.
var (
	spawnOnce sync.Once
	spawns    chan spawnReq
)

type spawnReq struct {
	cmd  *exec.Cmd
	done chan error
}

func spawn(cmd *exec.Cmd) error {
	spawnOnce.Do(func() {
		spawns = make(chan spawnReq)
		go func() {
			runtime.LockOSThread() // never unlocked: the thread lives as long as the process
			for r := range spawns {
				r.done <- r.cmd.Start()
			}
		}()
	})
	r := spawnReq{cmd: cmd, done: make(chan error, 1)}
	spawns <- r
	return <-r.done
}

package rig

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A server that exits at start-up fails WaitHTTP with its own last words.
func TestWaitHTTPReportsAnExit(t *testing.T) {
	log := filepath.Join(t.TempDir(), "srv.log")
	p, err := StartCommand("srv", exec.Command("sh", "-c", "echo no such server >&2; exit 3"), log)
	if err != nil {
		t.Fatal(err)
	}
	err = p.WaitHTTP(context.Background(), http.DefaultClient, "http://127.0.0.1:1/")
	if err == nil || !strings.Contains(err.Error(), "srv exited at start-up") || !strings.Contains(err.Error(), "no such server") {
		t.Fatalf("WaitHTTP: %v, want the exit and the log", err)
	}
	if p.Alive() {
		t.Error("Alive after the exit")
	}
	if err := p.Stop(time.Second); err != nil {
		t.Errorf("Stop of an exited server: %v", err)
	}
}

// WaitHTTP waits for a 200, and gives up when its context ends.
func TestWaitHTTPWaitsForOK(t *testing.T) {
	status := make(chan int, 1)
	status <- http.StatusServiceUnavailable
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		s := <-status
		status <- s
		w.WriteHeader(s)
	}))
	defer srv.Close()
	// Started as sfuflow starts its servers: with Pdeathsig, from a locked thread.
	cmd := exec.Command("sleep", "30")
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	p, err := StartCommand("srv", cmd, filepath.Join(t.TempDir(), "srv.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop(time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if err := p.WaitHTTP(ctx, srv.Client(), srv.URL); err == nil || !strings.Contains(err.Error(), "srv did not answer") {
		t.Fatalf("WaitHTTP on a 503: %v", err)
	}
	<-status
	status <- http.StatusOK
	if err := p.WaitHTTP(context.Background(), srv.Client(), srv.URL); err != nil {
		t.Fatalf("WaitHTTP on a 200: %v", err)
	}
	if err := p.Stop(5 * time.Second); err != nil {
		t.Errorf("Stop: %v", err)
	}
	if p.Alive() {
		t.Error("Alive after Stop")
	}
}

// A server that ignores SIGTERM is killed once the grace period is over, and Stop says so.
func TestStopKillsAfterGrace(t *testing.T) {
	// An ignored signal stays ignored across exec.
	log := filepath.Join(t.TempDir(), "srv.log")
	p, err := StartCommand("srv", exec.Command("sh", "-c", `trap "" TERM; echo ready; exec sleep 30`), log)
	if err != nil {
		t.Fatal(err)
	}
	for Tail(log) != "ready" { // the trap is set
		if !p.Alive() {
			t.Fatalf("exited: %s", Tail(log))
		}
		time.Sleep(10 * time.Millisecond)
	}
	err = p.Stop(200 * time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "srv did not exit on SIGTERM within 200ms; killed") {
		t.Fatalf("Stop: %v", err)
	}
	if err := syscall.Kill(p.PID(), 0); err == nil {
		t.Errorf("process %d still there", p.PID())
	}
}

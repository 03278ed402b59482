package main

import (
	"errors"
	"log/slog"
	"os"
	"syscall"
	"testing"
)

type countingReloader struct {
	n   int
	err error
}

func (r *countingReloader) ReloadCertificates() error { r.n++; return r.err }

// TestSIGHUPReloadsAndKeepsServing: SIGHUP reloads the certificates (also when that fails) and
// strata keeps running; SIGTERM or an interrupt stops it.
func TestSIGHUPReloadsAndKeepsServing(t *testing.T) {
	for _, stop := range []os.Signal{syscall.SIGTERM, os.Interrupt} {
		r := &countingReloader{}
		signals := make(chan os.Signal, 4)
		signals <- syscall.SIGHUP
		signals <- syscall.SIGHUP
		signals <- stop
		if got := waitForStop(signals, r, slog.New(slog.DiscardHandler)); got != stop || r.n != 2 {
			t.Errorf("stopped by %v after %d reloads, want %v after 2", got, r.n, stop)
		}
	}
	r := &countingReloader{err: errors.New("bad pem")}
	signals := make(chan os.Signal, 2)
	signals <- syscall.SIGHUP
	signals <- syscall.SIGTERM
	if got := waitForStop(signals, r, slog.New(slog.DiscardHandler)); got != syscall.SIGTERM || r.n != 1 {
		t.Errorf("a failed reload: stopped by %v after %d reloads", got, r.n)
	}
}

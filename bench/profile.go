package main

import (
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"syscall"
	"time"

	strataconfig "github.com/strata-rtc/strata/internal/config"
	"github.com/strata-rtc/strata/internal/rig"
	"github.com/strata-rtc/strata/internal/server"
)

// serveProfiledCmd is the hidden sub-command with which the benchmark re-executes itself to run
// strata with CPU and heap profiling (--profile): the same server as `strata serve`, built from
// the same packages, writing cpu.pprof on SIGTERM and heap.pprof after it.
const serveProfiledCmd = "serve-profiled"

func serveProfiled(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet(serveProfiledCmd, flag.ContinueOnError)
	path := fs.String("config", "", "strata configuration")
	cpuOut := fs.String("cpuprofile", "", "CPU profile to write")
	heapOut := fs.String("memprofile", "", "heap profile to write at exit")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	cfg, err := strataconfig.Load(*path)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	level := new(slog.LevelVar)
	_ = level.UnmarshalText([]byte(cfg.General.LogLevel))
	srv, err := server.New(cfg, slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level})), level)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	if err := srv.Start(); err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	var cpuFile *os.File
	if *cpuOut != "" {
		if cpuFile, err = os.Create(*cpuOut); err == nil {
			err = pprof.StartCPUProfile(cpuFile)
		}
		if err != nil {
			fmt.Fprintln(stderr, "cpu profile:", err)
		}
	}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	if *heapOut != "" {
		go keepPeakHeap(*heapOut, done)
	}
	<-stop
	close(done)
	if cpuFile != nil {
		pprof.StopCPUProfile()
		cpuFile.Close()
	}
	srv.Close()
	return 0
}

// keepPeakHeap writes a heap profile whenever the heap in use is the largest seen, so the file
// shows memory at peak load rather than after the clients left.
func keepPeakHeap(path string, done <-chan struct{}) {
	t := time.NewTicker(2 * time.Second)
	defer t.Stop()
	var peak uint64
	for {
		select {
		case <-done:
			return
		case <-t.C:
		}
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		if ms.HeapInuse <= peak {
			continue
		}
		peak = ms.HeapInuse
		if f, err := os.Create(path); err == nil {
			_ = pprof.Lookup("heap").WriteTo(f, 0)
			f.Close()
		}
	}
}

// profiledStrataTarget runs strata inside this benchmark binary (see serveProfiled).
func profiledStrataTarget(extras ...string) rig.Target {
	return rig.Target{Name: "strata", Write: func(dir, ip, nsIf string, port int) ([]string, error) {
		path, err := rig.WriteStrataConfig(dir, ip, nsIf, port, extras...)
		if err != nil {
			return nil, err
		}
		self, err := os.Executable()
		if err != nil {
			return nil, err
		}
		return []string{self, serveProfiledCmd, "-config", path, "-cpuprofile", filepath.Join(dir, "cpu.pprof"),
			"-memprofile", filepath.Join(dir, "heap.pprof")}, nil
	}}
}

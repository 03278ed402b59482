package main

import (
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/strata-rtc/strata/configs"
	"github.com/strata-rtc/strata/internal/config"
	"github.com/strata-rtc/strata/internal/server"
)

func serve(args []string, _, stderr io.Writer) int {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	path := fs.String("config", "", "YAML configuration file (default: the embedded reference configuration)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	cfg, err := config.Load(*path)
	if err != nil {
		fmt.Fprintln(stderr, "strata:", err)
		return 1
	}
	level := new(slog.LevelVar)
	if err := level.UnmarshalText([]byte(cfg.General.LogLevel)); err != nil {
		fmt.Fprintln(stderr, "strata:", err)
		return 1
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	srv, err := server.New(cfg, log, level)
	if err != nil {
		fmt.Fprintln(stderr, "strata:", err)
		return 1
	}
	if err := srv.Start(); err != nil {
		fmt.Fprintln(stderr, "strata:", err)
		return 1
	}
	if addr := srv.HTTPAddr(); addr != "" {
		log.Info("strata is up", "demos", "http://"+displayHost(addr)+"/", "janus_api", "http://"+displayHost(addr)+cfg.Transports.HTTP.BasePath)
	}
	if addr := srv.Addr(server.HTTPS); addr != "" {
		// Browsers give the camera only to secure pages: from another machine, the demos need this one.
		log.Info("strata is up over HTTPS", "demos", "https://"+displayHost(addr)+"/", "janus_api", "https://"+displayHost(addr)+cfg.Transports.HTTP.BasePath)
	}
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	sig := waitForStop(signals, srv, log)
	log.Info("shutting down", "signal", sig.String())
	srv.Close()
	return 0
}

// reloader is what SIGHUP acts on.
type reloader interface{ ReloadCertificates() error }

// waitForStop handles signals until one asks strata to stop, and returns it. SIGHUP reads the TLS
// certificates again (a renewal): new connections get them, open connections and calls carry on.
func waitForStop(signals <-chan os.Signal, srv reloader, log *slog.Logger) os.Signal {
	for sig := range signals {
		if sig != syscall.SIGHUP {
			return sig
		}
		if err := srv.ReloadCertificates(); err != nil {
			log.Error("SIGHUP: certificates not reloaded; the ones in use stay", "err", err)
		} else {
			log.Info("SIGHUP: certificates reloaded")
		}
	}
	return nil
}

func printConfig(_ []string, stdout, _ io.Writer) int {
	_, _ = stdout.Write(configs.Reference)
	return 0
}

// displayHost turns ":8088" into "localhost:8088" for the log line a user clicks.
func displayHost(addr string) string {
	if len(addr) > 0 && addr[0] == ':' {
		return "localhost" + addr
	}
	if len(addr) > 5 && addr[:5] == "[::]:" {
		return "localhost:" + addr[5:]
	}
	if len(addr) > 8 && addr[:8] == "0.0.0.0:" {
		return "localhost:" + addr[8:]
	}
	return addr
}

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
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, os.Interrupt, syscall.SIGTERM)
	sig := <-stop
	log.Info("shutting down", "signal", sig.String())
	srv.Close()
	return 0
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

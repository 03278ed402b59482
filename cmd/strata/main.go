// Command strata is a WebRTC media server that speaks the Janus API, with a congestion-control lab.
//
// Usage:
//
//	strata serve [-config FILE]          run the server
//	strata config                        print the reference configuration (all options, defaults)
//	strata lab run FILE|DIR [flags]      run lab scenarios in the simulator
//	strata load --server URL [flags]     load-test a Janus-API server (strata or Janus)
//	strata netctl serve|agent|check      the network controller and its interface-counter agent
//	strata rec convert IN.mjr OUT.opus   convert a recording into a file players read
//	strata lowprio get|put [flags] ...   move a file to or from a server at low priority (LEDBAT)
//	strata version
package main

import (
	"fmt"
	"io"
	"os"

	"github.com/strata-rtc/strata/internal/load"
	"github.com/strata-rtc/strata/internal/lowprio/lpcli"
	"github.com/strata-rtc/strata/internal/netctl"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

type command struct {
	name    string
	summary string
	run     func(args []string, stdout, stderr io.Writer) int
}

func commands() []command {
	return []command{
		{"serve", "run the media server", serve},
		{"config", "print the reference configuration", printConfig},
		{"lab", "run lab scenarios in the simulator (strata lab run FILE|DIR)", labCommand},
		{"load", "drive a Janus-API videoroom with synthetic WebRTC clients and measure the server", load.Main},
		{"netctl", "network controller for network-assisted simulcast (serve, agent, check)", netctl.Main},
		{"rec", "recordings: strata rec convert IN.mjr OUT.opus", recCommand},
		{"lowprio", "move a file to or from a server at low priority: strata lowprio get|put", lpcli.Main},
		{"version", "print the version", func([]string, io.Writer, io.Writer) int {
			fmt.Println("strata", version)
			return 0
		}},
	}
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(stderr)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	for _, c := range commands() {
		if c.name == args[0] {
			return c.run(args[1:], stdout, stderr)
		}
	}
	fmt.Fprintf(stderr, "strata: unknown command %q\n\n", args[0])
	usage(stderr)
	return 2
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: strata <command> [flags]")
	fmt.Fprintln(w)
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-8s %s\n", c.name, c.summary)
	}
}

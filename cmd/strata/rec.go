package main

import (
	"fmt"
	"io"

	"github.com/strata-rtc/strata/internal/record/convert"
)

const recUsage = `usage: strata rec convert IN.mjr OUT.opus

Converts a recording (Janus's .mjr format, as strata and Janus write it) into a file players read,
as janus-pp-rec does: packets put back in order, gaps filled with silence. The extension of OUT
says the format; for now Opus recordings become .opus or .ogg files.`

// recCommand is "strata rec": tools for recordings.
func recCommand(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] != "convert" {
		fmt.Fprintln(stderr, recUsage)
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
			return 0
		}
		return 2
	}
	if len(args) != 3 {
		fmt.Fprintln(stderr, recUsage)
		return 2
	}
	st, err := convert.File(args[1], args[2])
	if err != nil {
		fmt.Fprintln(stderr, "strata rec convert:", err)
		return 1
	}
	fmt.Fprintf(stdout, "%s: %d packets, %d silence frames filling gaps, %d dropped, %.3f s\n",
		args[2], st.Packets, st.Silence, st.Dropped, st.Duration.Seconds())
	if st.Cut {
		fmt.Fprintf(stderr, "strata rec convert: %s ends inside a packet; converted what came before it\n", args[1])
	}
	return 0
}

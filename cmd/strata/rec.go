package main

import (
	"fmt"
	"io"

	"github.com/strata-rtc/strata/internal/record/convert"
)

const recUsage = `usage: strata rec convert IN.mjr [IN2.mjr ...] OUT.(webm|mkv|opus|ogg|mp4)

Converts recordings (Janus's .mjr format, as strata and Janus write them) of one participant, its
audio and its video, into one file players read, as janus-pp-rec does: packets put back in order,
video waiting for a keyframe after a loss, audio gaps filled with silence, audio and video in sync.
Nothing is transcoded. The extension of OUT says the format:
  .webm, .mkv   VP8, VP9, AV1 and Opus
  .opus, .ogg   Opus
  .mp4          H.264, VP9, AV1 and Opus (fragmented MP4)`

// recCommand is "strata rec": tools for recordings.
func recCommand(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] != "convert" {
		fmt.Fprintln(stderr, recUsage)
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
			return 0
		}
		return 2
	}
	if len(args) < 3 {
		fmt.Fprintln(stderr, recUsage)
		return 2
	}
	ins, out := args[1:len(args)-1], args[len(args)-1]
	st, err := convert.File(out, ins...)
	if err != nil {
		fmt.Fprintln(stderr, "strata rec convert:", err)
		return 1
	}
	fmt.Fprint(stdout, st.Summary(out))
	return 0
}

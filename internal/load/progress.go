package load

import (
	"fmt"
	"io"
	"strings"

	"github.com/strata-rtc/strata/internal/load/report"
)

// progress draws a progress bar on stderr: redrawn in place on a terminal, otherwise a line every
// tenth update so logs stay short.
type progress struct {
	w        io.Writer
	terminal bool
	total    int
	n        int
}

func newProgress(w io.Writer, terminal bool, total int) *progress {
	return &progress{w: w, terminal: terminal, total: total}
}

func (p *progress) update(s report.Sample, joined int) {
	if p == nil || p.w == nil {
		return
	}
	p.n++
	if !p.terminal && p.n%10 != 1 {
		return
	}
	const width = 24
	filled := 0
	if p.total > 0 {
		filled = min(width, width*joined/p.total)
	}
	server := "server n/a"
	if s.ServerOK {
		server = fmt.Sprintf("server %3.0f%% cpu %4.0f MB", s.ServerCPUPct, float64(s.ServerRSSBytes)/(1<<20))
	}
	line := fmt.Sprintf("[%s%s] %d/%d joined  %4.0fs  %s  generator %3.0f%% cpu  rx %.1f Mbit/s  loss %.2f%%",
		strings.Repeat("#", filled), strings.Repeat(".", width-filled), joined, p.total, s.T, server, s.GenCPUPct, s.RecvMbps, s.LossPct)
	if p.terminal {
		fmt.Fprintf(p.w, "\r\033[K%s", line)
	} else {
		fmt.Fprintln(p.w, line)
	}
}

func (p *progress) finish() {
	if p != nil && p.w != nil && p.terminal {
		fmt.Fprintln(p.w)
	}
}

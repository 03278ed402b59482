package lab

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// progress reports finished runs on stderr: a redrawn bar on a terminal,
// one line per run otherwise.
type progress struct {
	mu       sync.Mutex
	w        io.Writer
	terminal bool
	total    int
	n        int
}

func newProgress(w io.Writer, terminal bool, total int) *progress {
	return &progress{w: w, terminal: terminal, total: total}
}

func (p *progress) done(name string, took time.Duration, err error) {
	if p == nil || p.w == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.n++
	status := "ok"
	if err != nil {
		status = "FAILED: " + err.Error()
	}
	if !p.terminal {
		fmt.Fprintf(p.w, "lab: [%d/%d] %s %s (%.2fs)\n", p.n, p.total, name, status, took.Seconds())
		return
	}
	const width = 30
	filled := width * p.n / p.total
	bar := strings.Repeat("=", filled) + strings.Repeat(" ", width-filled)
	if err != nil {
		fmt.Fprintf(p.w, "\r\033[K%s %s\n", name, status)
	}
	fmt.Fprintf(p.w, "\r\033[K[%s] %d/%d %s", bar, p.n, p.total, name)
}

func (p *progress) finish() {
	if p != nil && p.w != nil && p.terminal {
		fmt.Fprintln(p.w)
	}
}

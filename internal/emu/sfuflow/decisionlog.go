package sfuflow

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// recordDecisions writes the controller's decision stream (GET /v1/decisions/stream) into the
// run's netctl-decisions.log, each event line prefixed with the run's time, until ctx ends: the
// run's decisions over time (which layers each subscription had, why, and whether a switch
// enforced them), where the final state shows only the last.
func (s *Sessions) recordDecisions(ctx context.Context) {
	defer s.wg.Done()
	f, err := os.Create(filepath.Join(s.dir, "netctl-decisions.log"))
	if err != nil {
		fmt.Fprintf(s.env.Log, "sfuflow: decision log: %v\n", err)
		return
	}
	defer f.Close()
	w := bufio.NewWriter(f)
	defer w.Flush()
	httpc := hostHTTP(s.env.SFUHost)
	httpc.Timeout = 0 // a stream for the whole run
	for ctx.Err() == nil {
		if err := s.copyDecisions(ctx, httpc, w); err != nil && ctx.Err() == nil {
			fmt.Fprintf(w, "%.3f # %v\n", s.env.Clock.Now().Seconds(), err)
			select {
			case <-ctx.Done():
			case <-time.After(time.Second):
			}
		}
	}
}

// copyDecisions copies one connection's events (a reconnect starts with a snapshot).
func (s *Sessions) copyDecisions(ctx context.Context, c *http.Client, w *bufio.Writer) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.netctl+"/v1/decisions/stream", nil)
	if err != nil {
		return err
	}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("decision stream: HTTP %d", resp.StatusCode)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, ":") || strings.HasPrefix(line, "retry:") {
			continue
		}
		fmt.Fprintf(w, "%.3f %s\n", s.env.Clock.Now().Seconds(), line)
	}
	return sc.Err()
}

package netctl

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/strata-rtc/strata/internal/netctl/api"
)

// decisionStream serves GET /v1/decisions/stream as server-sent events: a snapshot of every
// decision first, then each change (see api.EventSnapshot and friends), and a comment line as a
// heartbeat when nothing happens. A client that reads too slowly is disconnected; on reconnecting
// it gets a fresh snapshot, so it never needs to replay missed events.
func (s *Server) decisionStream(w http.ResponseWriter, r *http.Request) {
	fl, ok := w.(http.Flusher)
	if !ok {
		s.fail(w, errorf(http.StatusInternalServerError, "internal", "streaming not supported by this connection"))
		return
	}
	watch := s.ctl.Watch(256)
	defer watch.Close()
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	if _, err := io.WriteString(w, "retry: 1000\n\n"); err != nil {
		return
	}
	fl.Flush()
	hb := time.NewTicker(s.heartbeat)
	defer hb.Stop()
	for {
		var err error
		select {
		case <-r.Context().Done():
			return
		case <-s.done:
			return
		case e, ok := <-watch.Events():
			if !ok {
				return // fell behind: the client reconnects and gets a snapshot
			}
			err = writeEvent(w, e)
		case <-hb.C:
			_, err = io.WriteString(w, ": ping\n\n")
		}
		if err != nil {
			return
		}
		fl.Flush()
	}
}

// writeEvent writes one server-sent event; the id is the decision sequence number.
func writeEvent(w io.Writer, e Event) error {
	var data any
	var seq uint64
	switch e.Type {
	case api.EventSnapshot:
		data, seq = e.Snapshot, e.Snapshot.Seq
	case api.EventDecision:
		data, seq = e.Decision, e.Decision.Seq
	case api.EventRemoved:
		data, seq = e.Removed, e.Removed.Seq
	default:
		return nil
	}
	b, err := json.Marshal(data)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "id: %d\nevent: %s\ndata: %s\n\n", seq, e.Type, b)
	return err
}

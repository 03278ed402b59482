package netctl

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/strata-rtc/strata/cc"
	"github.com/strata-rtc/strata/internal/netctl/api"
)

// Server is the controller's HTTP face: the northbound JSON API under /v1/ (the SFU's streams and
// subscriptions, decisions as JSON and as server-sent events), the agents' reports, the rules for
// external enforcers, and the status page at /. It reads the wall clock (as its uptime) and passes
// it to the controller; the controller itself stays clock-free.
type Server struct {
	ctl       *Controller
	clock     func() time.Duration
	log       *slog.Logger
	heartbeat time.Duration
	mux       *http.ServeMux
	done      chan struct{}
	closeOnce sync.Once
	switches  []SwitchStatus
}

// ServerOption configures a Server.
type ServerOption func(*Server)

// WithClock replaces the server's clock (uptime by default); tests use it to step time.
func WithClock(now func() time.Duration) ServerOption { return func(s *Server) { s.clock = now } }

// WithLogger sets the logger (default: discard).
func WithLogger(l *slog.Logger) ServerOption { return func(s *Server) { s.log = l } }

// WithHeartbeat sets how often an idle decision stream gets a comment line (default 15 s), so that
// clients and proxies can tell a quiet stream from a dead one.
func WithHeartbeat(d time.Duration) ServerOption { return func(s *Server) { s.heartbeat = d } }

// NewServer returns the HTTP server of a controller.
func NewServer(ctl *Controller, opts ...ServerOption) *Server {
	start := time.Now()
	s := &Server{
		ctl: ctl, clock: func() time.Duration { return time.Since(start) },
		log: slog.New(slog.DiscardHandler), heartbeat: 15 * time.Second,
		mux: http.NewServeMux(), done: make(chan struct{}),
	}
	for _, o := range opts {
		o(s)
	}
	s.routes()
	return s
}

type methods map[string]http.HandlerFunc

// route registers a path with one handler per method; other methods get a JSON 405.
func (s *Server) route(pattern string, m methods) {
	allowed := make([]string, 0, len(m))
	for k := range m {
		allowed = append(allowed, k)
	}
	slices.Sort(allowed)
	s.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		h, ok := m[r.Method]
		if !ok && r.Method == http.MethodHead {
			h, ok = m[http.MethodGet]
		}
		if !ok {
			w.Header().Set("Allow", strings.Join(allowed, ", "))
			s.fail(w, errorf(http.StatusMethodNotAllowed, api.CodeMethodNotAllowed, "%s %s: method not allowed (allowed: %s)", r.Method, r.URL.Path, strings.Join(allowed, ", ")))
			return
		}
		h(w, r)
	})
}

func (s *Server) routes() {
	p := api.Prefix
	s.route(p+"/health", methods{"GET": s.health})
	s.route(p+"/topology", methods{"GET": s.topology})
	s.route(p+"/links", methods{"GET": s.links})
	s.route(p+"/links/{name}", methods{"GET": s.link, "PUT": s.putLink})
	s.route(p+"/reports", methods{"POST": s.report})
	s.route(p+"/streams", methods{"GET": s.streams})
	s.route(p+"/streams/{id}", methods{"GET": s.stream, "PUT": s.putStream, "DELETE": s.deleteStream})
	s.route(p+"/streams/{id}/layers", methods{"PUT": s.putLayers})
	s.route(p+"/subscriptions", methods{"GET": s.subscriptions})
	s.route(p+"/subscriptions/{id}", methods{"GET": s.subscription, "PUT": s.putSubscription, "DELETE": s.deleteSubscription})
	s.route(p+"/decisions", methods{"GET": s.decisions})
	s.route(p+"/decisions/stream", methods{"GET": s.decisionStream})
	s.route(p+"/rules", methods{"GET": s.rules})
	s.route(p+"/switches", methods{"GET": s.listSwitches})
	s.route(p+"/switches/{node}", methods{"GET": s.getSwitch})
	s.route("/{$}", methods{"GET": s.status})
	s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		s.fail(w, errorf(http.StatusNotFound, api.CodeNotFound, "no such endpoint: %s (the API is under %s/)", r.URL.Path, api.Prefix))
	})
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// Run calls the controller's Update every tick (so that held upgrades and stale link samples take
// effect without any request) until ctx ends.
func (s *Server) Run(ctx context.Context, tick time.Duration) {
	t := time.NewTicker(tick)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			s.ctl.Update(s.clock())
		}
	}
}

// Close ends every open decision stream (http.Server.Shutdown does not wait for them otherwise).
func (s *Server) Close() { s.closeOnce.Do(func() { close(s.done) }) }

// update applies a change at once, so that the answer and the decision stream reflect it.
func (s *Server) update() { s.ctl.Update(s.clock()) }

func (s *Server) reply(w http.ResponseWriter, status int, v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false) // link names such as "a->b" stay readable
	if err := enc.Encode(v); err != nil {
		s.fail(w, &Error{Status: http.StatusInternalServerError, Code: "internal", Message: err.Error()})
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

func (s *Server) fail(w http.ResponseWriter, err error) {
	e := asError(err)
	if e.Status >= 500 {
		s.log.Error("netctl: request failed", "err", e.Message)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(e.body())
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(e.Status)
	_, _ = w.Write(buf.Bytes())
}

// decodeJSON reads one JSON value from a request body into v: at most api.MaxBodyBytes, no unknown
// fields, nothing after the value.
func decodeJSON(body io.Reader, v any) error {
	lr := &limitedReader{r: body, left: api.MaxBodyBytes}
	dec := json.NewDecoder(lr)
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if err == nil {
		if _, terr := dec.Token(); !errors.Is(terr, io.EOF) && !lr.exceeded {
			err = errors.New("unexpected data after the JSON value")
		}
	}
	switch {
	case lr.exceeded:
		return errorf(http.StatusRequestEntityTooLarge, api.CodeTooLarge, "request body larger than %d bytes", api.MaxBodyBytes)
	case errors.Is(err, io.EOF):
		return errorf(http.StatusBadRequest, api.CodeBadJSON, "empty request body (want a JSON object)")
	case err != nil:
		return errorf(http.StatusBadRequest, api.CodeBadJSON, "malformed JSON: %v", err)
	}
	return nil
}

// limitedReader reads at most left bytes and remembers whether the body had more.
type limitedReader struct {
	r        io.Reader
	left     int64
	exceeded bool
}

func (l *limitedReader) Read(p []byte) (int, error) {
	if l.left <= 0 {
		var one [1]byte
		if n, _ := io.ReadFull(l.r, one[:]); n > 0 {
			l.exceeded = true
		}
		return 0, io.EOF
	}
	if int64(len(p)) > l.left {
		p = p[:l.left]
	}
	n, err := l.r.Read(p)
	l.left -= int64(n)
	return n, err
}

// read decodes a request body, answering the error itself; it reports success.
func (s *Server) read(w http.ResponseWriter, r *http.Request, v any) bool {
	if err := decodeJSON(r.Body, v); err != nil {
		s.fail(w, err)
		return false
	}
	return true
}

// sameID checks the id in the body (optional) against the one in the path.
func (s *Server) sameID(w http.ResponseWriter, path string, body *string) bool {
	if *body != "" && *body != path {
		s.fail(w, errorf(http.StatusBadRequest, api.CodeIDMismatch, "id %q in the body does not match %q in the path", *body, path))
		return false
	}
	*body = path
	return true
}

func (s *Server) health(w http.ResponseWriter, _ *http.Request) {
	s.reply(w, http.StatusOK, api.Health{OK: true, Topology: s.ctl.Topology().Name(), Mode: s.ctl.Config().Alloc.Mode})
}

func (s *Server) topology(w http.ResponseWriter, _ *http.Request) {
	t := s.ctl.Topology()
	out := api.Topology{Name: t.Name(), Nodes: []api.TopologyNode{}, Links: []api.TopologyLink{}}
	for _, n := range t.Nodes() {
		out.Nodes = append(out.Nodes, api.TopologyNode{Name: n.Name, Enforcer: t.CanEnforce(n.Name), Role: n.Role})
	}
	for _, l := range t.Links() {
		out.Links = append(out.Links, api.TopologyLink{
			Name: l.Name, From: l.From, To: l.To, CapacityBps: int64(l.Capacity),
			DelayMs: float64(l.Delay) / 1e6, Interface: l.Interface, PeerInterface: l.PeerInterface,
		})
	}
	s.reply(w, http.StatusOK, out)
}

func (s *Server) links(w http.ResponseWriter, _ *http.Request) {
	s.reply(w, http.StatusOK, s.ctl.Links())
}

func (s *Server) link(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	for _, l := range s.ctl.Links() {
		if l.Name == name {
			s.reply(w, http.StatusOK, l)
			return
		}
	}
	s.fail(w, errorf(http.StatusNotFound, api.CodeUnknownLink, "unknown link %q", name))
}

func (s *Server) putLink(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	var u api.LinkUpdate
	if !s.read(w, r, &u) {
		return
	}
	if _, ok := s.ctl.Topology().LinkIndex(name); !ok {
		s.fail(w, errorf(http.StatusNotFound, api.CodeUnknownLink, "unknown link %q", name))
		return
	}
	switch {
	case u.CapacityBps == nil && u.LoadBps == nil && !u.Reset:
		s.fail(w, errorf(http.StatusBadRequest, api.CodeBadRequest, "give capacity_bps, load_bps or reset"))
		return
	case u.Reset && u.CapacityBps != nil:
		s.fail(w, errorf(http.StatusBadRequest, api.CodeBadRequest, "reset and capacity_bps are exclusive"))
		return
	case u.CapacityBps != nil && (*u.CapacityBps <= 0 || *u.CapacityBps > int64(cc.MaxBitrate)):
		s.fail(w, errorf(http.StatusBadRequest, api.CodeBadRate, "capacity_bps must be positive and at most %d, got %d", int64(cc.MaxBitrate), *u.CapacityBps))
		return
	case u.LoadBps != nil && (*u.LoadBps < 0 || *u.LoadBps > int64(cc.MaxBitrate)):
		s.fail(w, errorf(http.StatusBadRequest, api.CodeBadRate, "load_bps must be between 0 and %d, got %d", int64(cc.MaxBitrate), *u.LoadBps))
		return
	}
	if u.Reset {
		_ = s.ctl.SetLinkCapacity(name, 0)
	}
	if u.CapacityBps != nil {
		_ = s.ctl.SetLinkCapacity(name, cc.Bitrate(*u.CapacityBps))
	}
	if u.LoadBps != nil {
		_ = s.ctl.SetLinkLoad(name, cc.Bitrate(*u.LoadBps), s.clock())
	}
	s.log.Info("netctl: link updated", "link", name, "reset", u.Reset)
	s.update()
	s.link(w, r)
}

func (s *Server) report(w http.ResponseWriter, r *http.Request) {
	var rep api.Report
	if !s.read(w, r, &rep) {
		return
	}
	if rep.IntervalMs < 0 {
		s.fail(w, errorf(http.StatusBadRequest, api.CodeBadRequest, "interval_ms must not be negative"))
		return
	}
	res, err := s.ctl.Report(rep, s.clock())
	if err != nil {
		s.fail(w, err)
		return
	}
	s.update()
	s.reply(w, http.StatusOK, res)
}

package config

import (
	"cmp"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/strata-rtc/strata/internal/events"
)

// Events configures the event handlers (Janus's `events` section and its eventhandler plugins).
type Events struct {
	// Broadcast turns event handlers on at all (Janus's events.broadcast).
	Broadcast bool `yaml:"broadcast"`
	// JSEPSDP puts the SDP in jsep events (Janus always does).
	JSEPSDP bool `yaml:"jsep_sdp"`
	// StatsPeriod is how often media stats events are emitted for each PeerConnection (Janus's
	// events.stats_period); 0: never.
	StatsPeriod time.Duration `yaml:"stats_period"`
	// HandlerDefaults are what each handler uses for the options it does not set.
	HandlerDefaults EventHandlerOptions `yaml:"handler_defaults"`
	Handlers        []EventHandler      `yaml:"handlers"`
}

// EventHandler is one handler: where to and how.
type EventHandler struct {
	// Type is http (Janus's sampleevh) or websocket (Janus's wsevh).
	Type string `yaml:"type"`
	// Name is what query_eventhandler calls it by; empty: Janus's package name for its type.
	Name string `yaml:"name"`
	URL  string `yaml:"url"`
	// User and Password: HTTP basic authentication (Janus's backend_user, backend_pwd).
	User                string `yaml:"backend_user"`
	Password            string `yaml:"backend_pwd"`
	EventHandlerOptions `yaml:",inline"`
}

// EventHandlerOptions are a handler's tunables; nil: the handler_defaults' value.
type EventHandlerOptions struct {
	Events                 *string        `yaml:"events"`
	Grouping               *bool          `yaml:"grouping"`
	MaxRetransmissions     *int           `yaml:"max_retransmissions"`
	RetransmissionsBackoff *time.Duration `yaml:"retransmissions_backoff"`
	Queue                  *int           `yaml:"queue"`
	Timeout                *time.Duration `yaml:"timeout"`
	Subprotocol            *string        `yaml:"subprotocol"`
}

// Over fills the options o leaves unset (nil) from d.
func (o EventHandlerOptions) Over(d EventHandlerOptions) EventHandlerOptions {
	o.Events = cmp.Or(o.Events, d.Events)
	o.Grouping = cmp.Or(o.Grouping, d.Grouping)
	o.MaxRetransmissions = cmp.Or(o.MaxRetransmissions, d.MaxRetransmissions)
	o.RetransmissionsBackoff = cmp.Or(o.RetransmissionsBackoff, d.RetransmissionsBackoff)
	o.Queue = cmp.Or(o.Queue, d.Queue)
	o.Timeout = cmp.Or(o.Timeout, d.Timeout)
	o.Subprotocol = cmp.Or(o.Subprotocol, d.Subprotocol)
	return o
}

// HandlerName is the handler's name: its own, or Janus's package name for its type.
func (h EventHandler) HandlerName() string {
	if h.Name != "" {
		return h.Name
	}
	switch h.Type {
	case "websocket":
		return "janus.eventhandler.wsevh"
	default:
		return "janus.eventhandler.sampleevh"
	}
}

// validate checks the handler list.
func (e Events) validate() []error {
	var errs []error
	d := e.HandlerDefaults
	if d.Events == nil || d.Grouping == nil || d.MaxRetransmissions == nil || d.RetransmissionsBackoff == nil ||
		d.Queue == nil || d.Timeout == nil || d.Subprotocol == nil {
		errs = append(errs, fmt.Errorf("events.handler_defaults: every option must be set (the reference configuration sets them)"))
		return errs
	}
	if _, err := events.ParseMask(*d.Events); err != nil {
		errs = append(errs, fmt.Errorf("events.handler_defaults.events: %w", err))
	}
	if e.StatsPeriod < 0 {
		errs = append(errs, fmt.Errorf("events.stats_period: must not be negative"))
	}
	names := map[string]int{}
	for i, h := range e.Handlers {
		where := fmt.Sprintf("events.handlers[%d]", i)
		o := h.EventHandlerOptions.Over(d)
		var schemes []string
		switch h.Type {
		case "http":
			schemes = []string{"http", "https"}
		case "websocket":
			schemes = []string{"ws", "wss"}
		default:
			errs = append(errs, fmt.Errorf("%s.type: %q is not http or websocket", where, h.Type))
			continue
		}
		if u, err := url.Parse(h.URL); err != nil || u.Host == "" || !hasScheme(u.Scheme, schemes) {
			errs = append(errs, fmt.Errorf("%s.url: %q is not a %s URL with a host", where, h.URL, strings.Join(schemes, "/")))
		}
		if (h.User == "") != (h.Password == "") || (h.User != "" && h.Type != "http") {
			errs = append(errs, fmt.Errorf("%s: backend_user and backend_pwd go together, on an http handler", where))
		}
		if _, err := events.ParseMask(*o.Events); err != nil {
			errs = append(errs, fmt.Errorf("%s.events: %w", where, err))
		}
		if *o.MaxRetransmissions < 0 {
			errs = append(errs, fmt.Errorf("%s.max_retransmissions: must not be negative", where))
		}
		if *o.RetransmissionsBackoff <= 0 || *o.Timeout <= 0 || *o.Queue <= 0 {
			errs = append(errs, fmt.Errorf("%s: retransmissions_backoff, timeout and queue must be positive", where))
		}
		name := h.HandlerName()
		if j, dup := names[name]; dup {
			errs = append(errs, fmt.Errorf("%s: name %q is taken by events.handlers[%d]; give each handler of a type its own name", where, name, j))
		}
		names[name] = i
	}
	return errs
}

func hasScheme(s string, schemes []string) bool {
	for _, sc := range schemes {
		if strings.EqualFold(s, sc) {
			return true
		}
	}
	return false
}

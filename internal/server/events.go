package server

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/strata-rtc/strata/internal/config"
	"github.com/strata-rtc/strata/internal/events"
)

// eventsCloseTimeout is how long Close gives the handlers to deliver the events they still hold.
const eventsCloseTimeout = 2 * time.Second

// eventBus starts the configured handlers and returns their bus; nil (a valid bus that emits
// nothing) when broadcasting is off or no handler is configured. An invalid handler is an error that
// names it, and nothing is started.
func eventBus(cfg config.Events, emitter string, log *slog.Logger) (*events.Bus, error) {
	if !cfg.Broadcast || len(cfg.Handlers) == 0 {
		return nil, nil
	}
	if log == nil {
		log = slog.Default()
	}
	opts := make([]events.Options, len(cfg.Handlers))
	var errs []error
	for i, h := range cfg.Handlers {
		o, err := options(h, cfg.HandlerDefaults)
		if err != nil {
			errs = append(errs, fmt.Errorf("events.handlers[%d]: %w", i, err))
		}
		opts[i] = o
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	var handlers []events.Handler
	for i, h := range cfg.Handlers {
		var hd events.Handler
		var err error
		switch h.Type {
		case "http":
			hd, err = events.NewHTTP(opts[i], log)
		case "websocket":
			hd, err = events.NewWS(opts[i], log)
		default:
			err = fmt.Errorf("type %q is not http or websocket", h.Type)
		}
		if err != nil {
			for _, started := range handlers {
				started.Close(0)
			}
			return nil, fmt.Errorf("events.handlers[%d]: %w", i, err)
		}
		handlers = append(handlers, hd)
		log.Info("event handler started", "name", opts[i].Name, "type", h.Type, "url", h.URL, "events", opts[i].Mask.String())
	}
	return events.NewBus(emitter, handlers, log), nil
}

func options(h config.EventHandler, defaults config.EventHandlerOptions) (events.Options, error) {
	o := h.EventHandlerOptions.Over(defaults)
	if o.Events == nil || o.Grouping == nil || o.MaxRetransmissions == nil || o.RetransmissionsBackoff == nil ||
		o.Queue == nil || o.Timeout == nil || o.Subprotocol == nil {
		return events.Options{}, errors.New("an option is set neither on the handler nor in events.handler_defaults")
	}
	mask, err := events.ParseMask(*o.Events)
	if err != nil {
		return events.Options{}, fmt.Errorf("events: %w", err)
	}
	return events.Options{
		Name: h.HandlerName(), URL: h.URL, Mask: mask, Grouping: *o.Grouping,
		MaxRetransmissions: *o.MaxRetransmissions, Backoff: *o.RetransmissionsBackoff, Queue: *o.Queue,
		Timeout: *o.Timeout, User: h.User, Password: h.Password, Subprotocol: *o.Subprotocol,
	}, nil
}

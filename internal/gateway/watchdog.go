package gateway

import (
	"time"

	"github.com/strata-rtc/strata/internal/janus"
)

// watchdog expires sessions: those idle for longer than the session timeout get a `timeout` event
// and are destroyed; those left without a transport for longer than reclaim_session_timeout are
// destroyed silently.
func (g *Gateway) watchdog() {
	defer close(g.watchdogDone)
	t := time.NewTicker(g.watchdogEvery)
	defer t.Stop()
	for {
		select {
		case <-g.ctx.Done():
			return
		case now := <-t.C:
			g.expireSessions(now)
		}
	}
}

func (g *Gateway) expireSessions(now time.Time) {
	timeout := g.SessionTimeout()
	reclaim := g.cfg.General.ReclaimSessionTimeout
	for _, s := range g.allSessions() {
		if orphaned := s.orphanedSince(); !orphaned.IsZero() && now.Sub(orphaned) >= reclaim {
			g.log.Info("session not reclaimed in time, destroying", "session", s.id)
			g.destroySession(s, false)
			continue
		}
		if timeout > 0 && now.Sub(s.lastActivity()) >= timeout {
			g.log.Info("session timed out", "session", s.id, "idle", now.Sub(s.lastActivity()).Round(time.Millisecond))
			s.deliver(janus.Message{Janus: "timeout", SessionID: s.id})
			s.timedOut.Store(true)
			g.emitSession(s, "timeout", false)
			g.destroySession(s, false)
		}
	}
}

// SinkClosed is called by a transport when a connection that owns sessions goes away (a WebSocket
// closed). Its sessions are destroyed, or, with reclaim_session_timeout > 0, kept that long for a
// `claim` from another connection.
func (g *Gateway) SinkClosed(sink Sink) {
	reclaim := g.cfg.General.ReclaimSessionTimeout > 0
	for _, s := range g.allSessions() {
		if !s.ownedBy(sink) {
			continue
		}
		if reclaim {
			s.orphan(sink)
			continue
		}
		g.destroySession(s, false)
	}
}

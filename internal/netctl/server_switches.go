package netctl

import (
	"net/http"

	"github.com/strata-rtc/strata/internal/netctl/api"
)

// SwitchStatus is an enforcement switch that reports its state (switchctl.Enforcer does).
type SwitchStatus interface {
	Node() string
	Status() api.Switch
}

// WithSwitches lets the server show the switches' state (GET /v1/switches, the status page).
func WithSwitches(sw ...SwitchStatus) ServerOption {
	return func(s *Server) { s.switches = append(s.switches, sw...) }
}

func (s *Server) switchList() []api.Switch {
	out := make([]api.Switch, 0, len(s.switches))
	for _, sw := range s.switches {
		out = append(out, sw.Status())
	}
	return out
}

func (s *Server) listSwitches(w http.ResponseWriter, _ *http.Request) {
	s.reply(w, http.StatusOK, s.switchList())
}

func (s *Server) getSwitch(w http.ResponseWriter, r *http.Request) {
	node := r.PathValue("node")
	for _, sw := range s.switches {
		if sw.Node() == node {
			s.reply(w, http.StatusOK, sw.Status())
			return
		}
	}
	if !s.ctl.Topology().HasNode(node) {
		s.fail(w, errorf(http.StatusNotFound, api.CodeUnknownNode, "unknown node %q", node))
		return
	}
	s.fail(w, errorf(http.StatusNotFound, api.CodeNotFound, "no switch on node %q (strata netctl serve -switch %s=unix:/path/br0.mgmt)", node, node))
}

package netctl

import (
	"net/http"

	"github.com/strata-rtc/strata/internal/netctl/api"
)

func (s *Server) streams(w http.ResponseWriter, _ *http.Request) {
	s.reply(w, http.StatusOK, s.ctl.Streams())
}

func (s *Server) stream(w http.ResponseWriter, r *http.Request) {
	st, ok := s.ctl.Stream(r.PathValue("id"))
	if !ok {
		s.fail(w, errorf(http.StatusNotFound, api.CodeUnknownStream, "unknown stream %q", r.PathValue("id")))
		return
	}
	s.reply(w, http.StatusOK, st)
}

func (s *Server) putStream(w http.ResponseWriter, r *http.Request) {
	var st api.Stream
	if !s.read(w, r, &st) || !s.sameID(w, r.PathValue("id"), &st.ID) {
		return
	}
	_, existed := s.ctl.Stream(st.ID)
	if err := s.ctl.PutStream(st); err != nil {
		s.fail(w, err)
		return
	}
	s.log.Info("netctl: stream registered", "stream", st.ID, "source", st.Source, "layers", len(st.Layers))
	s.update()
	out, _ := s.ctl.Stream(st.ID)
	s.reply(w, createdOr(existed), out)
}

func (s *Server) putLayers(w http.ResponseWriter, r *http.Request) {
	var u api.LayersUpdate
	if !s.read(w, r, &u) {
		return
	}
	id := r.PathValue("id")
	if err := s.ctl.SetLayers(id, u.Layers); err != nil {
		s.fail(w, err)
		return
	}
	s.update()
	out, _ := s.ctl.Stream(id)
	s.reply(w, http.StatusOK, out)
}

func (s *Server) deleteStream(w http.ResponseWriter, r *http.Request) {
	if err := s.ctl.DeleteStream(r.PathValue("id")); err != nil {
		s.fail(w, err)
		return
	}
	s.log.Info("netctl: stream deleted", "stream", r.PathValue("id"))
	s.update()
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) subscriptions(w http.ResponseWriter, _ *http.Request) {
	s.reply(w, http.StatusOK, s.ctl.Subscriptions())
}

func (s *Server) subscription(w http.ResponseWriter, r *http.Request) {
	sub, ok := s.ctl.Subscription(r.PathValue("id"))
	if !ok {
		s.fail(w, errorf(http.StatusNotFound, api.CodeUnknownSubscription, "unknown subscription %q", r.PathValue("id")))
		return
	}
	s.reply(w, http.StatusOK, sub)
}

func (s *Server) putSubscription(w http.ResponseWriter, r *http.Request) {
	var sub api.Subscription
	if !s.read(w, r, &sub) || !s.sameID(w, r.PathValue("id"), &sub.ID) {
		return
	}
	_, existed := s.ctl.Subscription(sub.ID)
	if err := s.ctl.PutSubscription(sub); err != nil {
		s.fail(w, err)
		return
	}
	s.update()
	out, _ := s.ctl.Subscription(sub.ID)
	d, _ := s.ctl.Decision(sub.ID)
	s.log.Info("netctl: subscription registered", "subscription", sub.ID, "stream", sub.Stream, "receiver", out.Receiver, "layers", d.Layers)
	s.reply(w, createdOr(existed), api.SubscriptionResult{Subscription: out, Decision: d})
}

func (s *Server) deleteSubscription(w http.ResponseWriter, r *http.Request) {
	if err := s.ctl.DeleteSubscription(r.PathValue("id")); err != nil {
		s.fail(w, err)
		return
	}
	s.update()
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) decisions(w http.ResponseWriter, _ *http.Request) {
	s.reply(w, http.StatusOK, s.ctl.Decisions())
}

func (s *Server) rules(w http.ResponseWriter, r *http.Request) {
	node := r.URL.Query().Get("node")
	if node == "" {
		s.fail(w, errorf(http.StatusBadRequest, api.CodeBadRequest, "missing query parameter node (GET %s/rules?node=NAME)", api.Prefix))
		return
	}
	if !s.ctl.Topology().HasNode(node) {
		s.fail(w, errorf(http.StatusNotFound, api.CodeUnknownNode, "unknown node %q", node))
		return
	}
	s.reply(w, http.StatusOK, s.ctl.Rules().Rules(node))
}

func createdOr(existed bool) int {
	if existed {
		return http.StatusOK
	}
	return http.StatusCreated
}

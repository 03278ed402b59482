package streaming

import (
	"encoding/json"

	"github.com/strata-rtc/strata/internal/plugin"
)

// handleSync answers a synchronous request: its plugindata, errors included. A request about
// another node's mountpoint (raw, as the client sent it) is answered by that node.
func (p *Plugin) handleSync(name string, b plugin.Body, raw json.RawMessage) any {
	if mp := p.remoteTarget(name, b); mp != nil {
		var data any
		var err *Error
		if name == "info" {
			data, err = p.cl.remoteInfo(mp, raw)
		} else {
			data, err = p.cl.forward(mp, raw)
		}
		if err != nil {
			return err.Data(Short)
		}
		return data
	}
	return p.handleSyncLocal(name, b)
}

// remoteTarget returns the other node's mountpoint a request is about, if it is about one.
func (p *Plugin) remoteTarget(name string, b plugin.Body) *mountpoint {
	if p.cl == nil {
		return nil
	}
	switch name {
	case "info", "destroy", "edit", "enable", "disable", "recording", "kick", "kick_all":
	default:
		return nil
	}
	id, err := idOnly(b)
	if err != nil {
		return nil
	}
	mp := p.mountpoint(id)
	if mp == nil || mp.home == "" {
		return nil
	}
	return mp
}

// handleSyncLocal answers a synchronous request about this node's mountpoints.
func (p *Plugin) handleSyncLocal(name string, b plugin.Body) any {
	req, err := ParseBody(name, b)
	if err != nil {
		return err.Data(Short)
	}
	var data any
	switch r := req.(type) {
	case *List:
		data, err = p.list(r)
	case *Info:
		data, err = p.info(r)
	case *Create:
		data, err = p.createRequest(r)
	case *Destroy:
		data, err = p.destroy(r)
	case *Edit:
		data, err = p.edit(r)
	case *Toggle:
		data, err = p.toggle(r)
	case *Recording:
		data, err = p.recording(r)
	case *Kick:
		data, err = p.kick(r)
	case *KickAll:
		data, err = p.kickAll(r)
	default:
		err = errorf(ErrInvalidReq, "Unknown request '%s'", b.Str("request"))
	}
	if err != nil {
		return err.Data(Short)
	}
	return data
}

func (p *Plugin) list(r *List) (any, *Error) {
	private, err := r.Check(p.cfg.AdminKey)
	if err != nil {
		return nil, err
	}
	out := []map[string]any{}
	for _, mp := range p.mountpointList(true) {
		mp.mu.Lock()
		hidden := mp.isPrivate && !private
		mp.mu.Unlock()
		if !hidden {
			out = append(out, p.cl.withNode(mp, mp.listEntry()))
		}
	}
	return map[string]any{Short: "list", "list": out}, nil
}

func (p *Plugin) info(r *Info) (any, *Error) {
	mp := p.localMountpoint(r.ID)
	if mp == nil {
		return nil, NoSuchMountpoint(r.ID)
	}
	return map[string]any{Short: "info", "info": p.cl.withNode(mp, mp.info(r.Admin(mp.secretValue())))}, nil
}

func (mp *mountpoint) secretValue() string {
	mp.mu.Lock()
	defer mp.mu.Unlock()
	return mp.secret
}

func (p *Plugin) createRequest(r *Create) (any, *Error) {
	if err := r.Check(p.cfg.AdminKey); err != nil {
		return nil, err
	}
	if r.Permanent {
		return nil, errorf(ErrUnknown, "No configuration file, can't create permanent mountpoint")
	}
	if r.ID != 0 && p.mountpoint(r.ID) != nil {
		return nil, errorf(ErrCantCreate, "A stream with the provided ID already exists")
	}
	if err := r.CheckSource(); err != nil {
		return nil, err
	}
	mp, err := p.create(r, false)
	if err != nil {
		return nil, err
	}
	// An ondemand source is opened per viewer, and data streams stay here: nothing to relay.
	if p.cl != nil && mp.live() && len(mp.relayedStreams()) > 0 {
		mp.announced = true
		p.cl.announce(mp, true)
	}
	p.log.Info("streaming mountpoint created", "id", mp.id, "type", mp.kind)
	return map[string]any{Short: "created", "created": mp.name, "permanent": false, "stream": mp.created()}, nil
}

// withSecret finds the mountpoint and checks its secret (455, then 453/454/457).
func (p *Plugin) withSecret(id uint64, secret Secret) (*mountpoint, *Error) {
	mp := p.localMountpoint(id)
	if mp == nil {
		return nil, NoSuchMountpoint(id)
	}
	return mp, secret.Check(mp.secretValue())
}

func (p *Plugin) destroy(r *Destroy) (any, *Error) {
	mp, err := p.withSecret(r.ID, r.Secret)
	if err != nil {
		return nil, err
	}
	if r.Permanent {
		return nil, errorf(ErrUnknown, "No configuration file, can't destroy permanent mountpoint")
	}
	p.mu.Lock()
	if p.mps[r.ID] == mp {
		delete(p.mps, r.ID)
	}
	p.mu.Unlock()
	if mp.announced {
		p.cl.withdraw(mp)
	}
	mp.close()
	p.log.Info("streaming mountpoint destroyed", "id", r.ID)
	return map[string]any{Short: "destroyed", "destroyed": r.ID}, nil
}

func (p *Plugin) edit(r *Edit) (any, *Error) {
	mp := p.localMountpoint(r.ID)
	if mp == nil {
		return nil, r.NoSuchMountpoint()
	}
	if err := r.Secret.Check(mp.secretValue()); err != nil {
		return nil, err
	}
	if r.Permanent {
		return nil, errorf(ErrUnknown, "No configuration file, can't edit permanent mountpoint")
	}
	mp.mu.Lock()
	if r.NewDescription != nil && *r.NewDescription != "" {
		mp.description = *r.NewDescription
	}
	if r.NewMetadata != nil {
		mp.metadata = *r.NewMetadata
	}
	if r.NewSecret != nil && *r.NewSecret != "" {
		mp.secret = *r.NewSecret
	}
	if r.NewPIN != nil {
		mp.pin = *r.NewPIN
	}
	if r.NewIsPrivate != nil {
		mp.isPrivate = *r.NewIsPrivate
	}
	mp.mu.Unlock()
	if mp.announced {
		p.cl.announce(mp, false)
	}
	if r.EditedEvent {
		// Janus pushes this object as it is, without "streaming".
		ev := map[string]any{"event": "edited", "id": r.ID}
		mp.mu.Lock()
		if mp.metadata != "" {
			ev["metadata"] = mp.metadata
		}
		mp.mu.Unlock()
		for _, s := range mp.viewerList() {
			s.push("", ev, nil)
		}
	}
	return map[string]any{Short: "edited", "id": r.ID, "permanent": false}, nil
}

// toggle is enable and disable: a disabled mountpoint forwards nothing to its viewers (Janus);
// disable with stop_recording ends its recordings too.
func (p *Plugin) toggle(r *Toggle) (any, *Error) {
	mp := p.localMountpoint(r.ID)
	if mp == nil {
		return nil, NoSuchMountpoint(r.ID)
	}
	if err := r.Check(mp.secretValue()); err != nil {
		return nil, err
	}
	mp.mu.Lock()
	mp.enabled = r.Op == "enable"
	mp.mu.Unlock()
	if mp.announced {
		p.cl.announce(mp, false)
	}
	for _, s := range mp.viewerList() {
		if v := s.viewer(); v != nil {
			v.applyPause()
		}
	}
	if r.Op == "disable" && r.StopRecording {
		for _, st := range mp.streams {
			st.stopRecording()
		}
	}
	return map[string]any{Short: "ok"}, nil
}

// kick hangs up one viewer (strata's request; the viewer is named by its handle id, which info
// lists for the mountpoint's admin as viewer_handles).
func (p *Plugin) kick(r *Kick) (any, *Error) {
	mp, err := p.withSecret(r.ID, r.Secret)
	if err != nil {
		return nil, err
	}
	for _, s := range mp.viewerList() {
		if s.h.ID() == r.Viewer {
			s.endViewing(mp, "kicked")
			return map[string]any{Short: "kicked", "id": r.ID, "viewer": r.Viewer}, nil
		}
	}
	return nil, errorf(ErrNoSuchMP, "No such viewer %d on mountpoint %d", r.Viewer, r.ID)
}

// kickAll hangs up every viewer, each told {"status":"kicked_all"}.
func (p *Plugin) kickAll(r *KickAll) (any, *Error) {
	mp, err := p.withSecret(r.ID, r.Secret)
	if err != nil {
		return nil, err
	}
	for _, s := range mp.viewerList() {
		s.endViewing(mp, "kicked_all")
	}
	if mp.announced {
		p.cl.kickAllElsewhere(mp.id) // its viewers on the other nodes
	}
	return map[string]any{Short: "kicked_all"}, nil
}

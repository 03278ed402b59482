package audiobridge

func (p *Plugin) enableMJRs(e *EnableMJRs) (any, *Error) {
	r, err := p.authorized(e.Room, e.Secret)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	r.opts.MJRs = e.MJRs
	if e.MJRsDir != nil {
		r.opts.MJRsDir = *e.MJRsDir
	}
	r.mu.Unlock()
	mjrs := e.MJRs
	return RecordingReply{Audiobridge: "success", MJRs: &mjrs}, nil
}

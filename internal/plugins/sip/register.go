package sip

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/emiago/sipgo/sip"

	"github.com/strata-rtc/strata/internal/plugin"
)

// account is what register configured: the identity calls are made with, and the registration.
type account struct {
	username      string // the SIP URI as the request gave it (Janus's account.username)
	identity      string
	uri           sip.Uri
	display       string
	creds         credentials
	proxy         *sip.Uri // registrar (Janus: proxy)
	outbound      *sip.Uri // where every request goes first (Janus: outbound_proxy)
	transport     string   // "udp" or "tcp"
	userAgent     string
	headers       []header
	contactParams map[string]string
	prefixes      []string // incoming_header_prefixes
	ttl           int
	sendRegister  bool
	callID        string // the registration's Call-ID, kept across refreshes
	cseq          uint32
}

// register is Janus's register request: a REGISTER with digest authentication, or none for a
// guest or a helper (who calls with its master's identity).
func (s *session) register(ctx context.Context, r req) *plugin.RequestError {
	b := r.b
	s.mu.Lock()
	reg, master, user := s.reg, s.master, s.acct.username
	s.mu.Unlock()
	if reg != regUnregistered && reg != regFailed && !b.Bool("refresh") {
		return plugin.Errorf(ErrAlreadyRegistered, "Already registered (%s)", user)
	}
	kind := b.Str("type")
	if kind == "helper" {
		return s.registerHelper(r)
	}
	if master != nil {
		return plugin.Errorf(ErrHelper, "Can't register on a helper session")
	}
	guest := kind == "guest"
	send := true
	if b.Has("send_register") {
		if guest {
			return plugin.Errorf(ErrInvalidElement, "Conflicting elements: send_register cannot be true if guest is true")
		}
		send = b.Bool("send_register")
	}
	if b.Bool("force_udp") && b.Bool("force_tcp") {
		return plugin.Errorf(ErrInvalidElement, "Conflicting elements: force_udp and force_tcp cannot both be true")
	}
	a, rerr := s.parseAccount(b, r.raw, guest)
	if rerr != nil {
		return rerr
	}
	a.sendRegister = send && !guest
	if err := s.ensureStack(a.userAgent); err != nil {
		return plugin.Errorf(ErrLibSofia, "SIP stack: %v", err)
	}
	s.mu.Lock()
	if s.masterID == 0 {
		s.mu.Unlock()
		id := s.p.addMaster(s)
		s.mu.Lock()
		s.masterID = id
	}
	if a.callID == "" {
		a.callID = randomID()
	}
	s.acct = a
	masterID := s.masterID
	if !a.sendRegister {
		s.reg = regDisabled
		s.mu.Unlock()
		s.event(r.tx, "", map[string]any{"event": "registered", "username": a.username, "register_sent": false, "master_id": masterID}, nil)
		return nil
	}
	s.reg = regRegistering
	s.mu.Unlock()
	s.event(r.tx, "", map[string]any{"event": "registering"}, nil)
	go s.registerNow(a.ttl)
	return nil
}

// parseAccount reads the identity, credentials and proxies of a register request.
func (s *session) parseAccount(b plugin.Body, raw []byte, guest bool) (account, *plugin.RequestError) {
	a := account{username: b.Str("username"), display: b.Str("display_name"), userAgent: s.p.cfg.UserAgent}
	a.identity = a.username
	if ua := b.Str("user_agent"); ua != "" && !strings.ContainsAny(ua, "\r\n") {
		a.userAgent = ua
	}
	for _, key := range []string{"proxy", "outbound_proxy"} {
		if !b.Has(key) || string(rawField(raw, key)) == "null" {
			continue
		}
		if err := b.Validate(proxyParams...); err != nil {
			return a, err
		}
		u, err := parseURI(b.Str(key), true)
		if err != nil {
			return a, plugin.Errorf(ErrInvalidAddress, "Invalid %s address %s\n", key, b.Str(key))
		}
		if key == "proxy" {
			a.proxy = &u
		} else {
			a.outbound = &u
		}
	}
	u, err := parseURI(a.username, false)
	if err != nil {
		return a, plugin.Errorf(ErrInvalidAddress, "Invalid user address %s\n", a.username)
	}
	a.uri = u
	a.creds.user = u.User
	if !guest {
		if !b.Has("secret") && !b.Has("ha1_secret") {
			return a, plugin.Errorf(ErrMissingElement, "Missing element (secret or ha1_secret)")
		}
		if b.Has("secret") && b.Has("ha1_secret") {
			return a, plugin.Errorf(ErrInvalidElement, "Conflicting elements specified (secret and ha1_secret)")
		}
		a.creds.secret, a.creds.ha1 = b.Str("secret"), b.Str("ha1_secret")
		if au := b.Str("authuser"); au != "" {
			a.creds.user = au
		}
	}
	a.transport = "udp"
	if b.Bool("force_tcp") || (a.proxy != nil && uriTransport(*a.proxy) == "tcp") {
		a.transport = "tcp"
	}
	a.ttl = s.p.cfg.RegisterTTL
	if b.Has("register_ttl") {
		a.ttl = int(b.Int("register_ttl"))
	}
	if a.ttl <= 0 {
		a.ttl = defaultTTL
	}
	a.headers = customHeaders(raw)
	a.contactParams = stringMap(raw, "contact_params")
	a.prefixes, _ = b.Strings("incoming_header_prefixes", "")
	return a, nil
}

// registerHelper makes this handle a helper of a registered master (Janus's multiple calls on one
// account): no REGISTER, calls go out with the master's identity and credentials.
func (s *session) registerHelper(r req) *plugin.RequestError {
	if !r.b.Has("master_id") {
		return plugin.Errorf(ErrMissingElement, "Missing mandatory element for helper (master_id)")
	}
	id := uint64(uint32(r.b.Int("master_id")))
	s.mu.Lock()
	already := s.master != nil
	s.mu.Unlock()
	if already {
		return plugin.Errorf(ErrHelper, "Session already a helper (%d)", id)
	}
	m := s.p.master(id)
	if m == nil || m == s {
		return plugin.Errorf(ErrHelper, "No such master session (%d)", id)
	}
	m.mu.Lock()
	a := m.acct
	m.mu.Unlock()
	a.sendRegister = false
	if err := s.ensureStack(a.userAgent); err != nil {
		return plugin.Errorf(ErrLibSofia, "SIP stack: %v", err)
	}
	s.mu.Lock()
	s.master, s.masterID, s.acct, s.reg = m, id, a, regDisabled
	s.mu.Unlock()
	s.event(r.tx, "", map[string]any{"event": "registered", "username": a.username, "register_sent": false, "helper": true, "master_id": id}, nil)
	return nil
}

// unregister sends a REGISTER with Expires 0 (a helper just leaves its master).
func (s *session) unregister(_ context.Context, r req) *plugin.RequestError {
	s.mu.Lock()
	if s.st == nil {
		s.mu.Unlock()
		return plugin.Errorf(ErrWrongState, "Wrong state (register first)")
	}
	if s.master != nil {
		s.master, s.masterID, s.reg = nil, 0, regUnregistered
		s.mu.Unlock()
		s.event(r.tx, "", map[string]any{"event": "unregistering"}, nil)
		return nil
	}
	if s.reg != regRegistered && s.reg != regDisabled {
		s.mu.Unlock()
		return plugin.Errorf(ErrWrongState, "Wrong state (not registered)")
	}
	sent := s.reg == regRegistered
	s.reg = regUnregistering
	s.stopTimersLocked()
	s.mu.Unlock()
	s.event(r.tx, "", map[string]any{"event": "unregistering"}, nil)
	go func() {
		if sent {
			ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
			res := s.sendRegister(ctx, 0)
			cancel()
			if res != nil && !res.IsSuccess() {
				s.log.Debug("unregister refused", "code", res.StatusCode)
			}
		}
		s.mu.Lock()
		s.reg = regUnregistered
		user := s.acct.username
		s.mu.Unlock()
		s.event("", "", map[string]any{"event": "unregistered", "username": user, "register_sent": sent}, nil)
	}()
	return nil
}

// registerNow sends the REGISTER and reports registered or registration_failed; on success the
// refresh is scheduled before the registrar's expiry.
func (s *session) registerNow(ttl int) {
	ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
	res := s.sendRegister(ctx, ttl)
	cancel()
	s.mu.Lock()
	if s.detached || s.reg == regUnregistering || s.reg == regUnregistered {
		s.mu.Unlock()
		return
	}
	user, masterID := s.acct.username, s.masterID
	if res == nil || !res.IsSuccess() {
		code, reason := 408, "Request Timeout"
		if res != nil {
			code, reason = res.StatusCode, res.Reason
		}
		s.reg = regFailed
		s.mu.Unlock()
		s.event("", "", map[string]any{"event": "registration_failed", "code": code, "reason": reason}, nil)
		return
	}
	s.reg = regRegistered
	s.scheduleRefreshLocked(grantedExpiry(res, ttl))
	s.mu.Unlock()
	result := map[string]any{"event": "registered", "username": user, "register_sent": true, "master_id": masterID}
	if h := s.incomingHeaders(res.Headers()); h != nil {
		result["headers"] = h
	}
	s.event("", "", result, nil)
}

// scheduleRefreshLocked refreshes the registration before it expires (at 90% of its life, at
// least a second before), and starts the OPTIONS keepalive.
func (s *session) scheduleRefreshLocked(expires int) {
	s.stopTimersLocked()
	life := time.Duration(expires) * time.Second
	at := max(life*9/10, life-time.Second, time.Second)
	ttl := s.acct.ttl
	s.regTimer = time.AfterFunc(at, func() { s.registerNow(ttl) })
	if ka := s.p.cfg.KeepaliveInterval; ka > 0 {
		t := time.NewTicker(time.Duration(ka) * time.Second)
		s.keepTick = t
		go s.keepalive(t)
	}
}

func (s *session) stopTimersLocked() {
	if s.regTimer != nil {
		s.regTimer.Stop()
		s.regTimer = nil
	}
	if s.keepTick != nil {
		s.keepTick.Stop()
		s.keepTick = nil
	}
}

// keepalive sends an OPTIONS to the registrar on each tick, until the ticker is replaced.
func (s *session) keepalive(t *time.Ticker) {
	for range t.C {
		s.mu.Lock()
		if s.keepTick != t || s.st == nil {
			s.mu.Unlock()
			return
		}
		a, st := s.acct, s.st
		s.mu.Unlock()
		req := sip.NewRequest(sip.OPTIONS, registrarURI(a))
		s.prepare(req, a, st)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_, _ = st.client(a.transport).Do(ctx, req)
		cancel()
	}
}

// sendRegister sends a REGISTER with expires (0: unregister), answering up to two challenges.
// The final response, or nil when none came.
func (s *session) sendRegister(ctx context.Context, expires int) *sip.Response {
	s.mu.Lock()
	a, st := s.acct, s.st
	s.mu.Unlock()
	if st == nil {
		return nil
	}
	var res *sip.Response
	for attempt := 0; attempt < 3; attempt++ {
		s.mu.Lock()
		s.acct.cseq++
		cseq := s.acct.cseq
		s.mu.Unlock()
		req := sip.NewRequest(sip.REGISTER, registrarURI(a))
		s.prepare(req, a, st)
		from := sip.FromHeader{DisplayName: a.display, Address: a.uri, Params: sip.NewParams()}
		from.Params.Add("tag", randomID()[:10])
		to := sip.ToHeader{Address: a.uri}
		callID := sip.CallIDHeader(a.callID)
		req.AppendHeader(&from)
		req.AppendHeader(&to)
		req.AppendHeader(&callID)
		req.AppendHeader(&sip.CSeqHeader{SeqNo: cseq, MethodName: sip.REGISTER})
		contact := st.contact(a.uri.User, a.transport, a.contactParams)
		req.AppendHeader(&contact)
		req.AppendHeader(sip.NewHeader("Expires", strconv.Itoa(expires)))
		if res != nil && isChallenge(res) {
			if err := authorize(req, res, a.creds); err != nil {
				s.log.Debug("REGISTER challenge", "err", err)
				return res
			}
		}
		var err error
		res, err = st.client(a.transport).Do(ctx, req)
		if err != nil {
			s.log.Debug("REGISTER", "err", err)
			return nil
		}
		if !isChallenge(res) || !a.creds.usable() {
			return res
		}
	}
	return res
}

// prepare sets what every out-of-dialog request of the account carries: route, transport,
// User-Agent, custom headers.
func (s *session) prepare(req *sip.Request, a account, st *stack) {
	req.SetTransport(strings.ToUpper(a.transport))
	if a.outbound != nil {
		req.SetDestination(hostPort(*a.outbound))
	} else if a.proxy != nil {
		req.SetDestination(hostPort(*a.proxy))
	}
	if a.userAgent != "" {
		req.AppendHeader(sip.NewHeader("User-Agent", a.userAgent))
	}
	for _, h := range a.headers {
		req.AppendHeader(sip.NewHeader(h.name, h.value))
	}
}

// registrarURI is where REGISTER goes: the proxy, or the domain of the user's URI.
func registrarURI(a account) sip.Uri {
	if a.proxy != nil {
		return sip.Uri{Scheme: "sip", Host: a.proxy.Host, Port: a.proxy.Port}
	}
	return sip.Uri{Scheme: "sip", Host: a.uri.Host, Port: a.uri.Port}
}

// grantedExpiry is the registration's lifetime the registrar granted (our Contact's expires, or
// the Expires header), or asked when it says neither.
func grantedExpiry(res *sip.Response, asked int) int {
	if c := res.Contact(); c != nil {
		if v, ok := c.Params.Get("expires"); ok {
			if n, err := strconv.Atoi(v); err == nil && n > 0 {
				return n
			}
		}
	}
	if h := res.GetHeader("Expires"); h != nil {
		if n, err := strconv.Atoi(strings.TrimSpace(h.Value())); err == nil && n > 0 {
			return n
		}
	}
	return asked
}

// ensureStack starts the handle's SIP stack on first use.
func (s *session) ensureStack(userAgent string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.st != nil {
		return nil
	}
	st, err := newStack(s.p.cfg, s.p.localIP, userAgent, s, s.log)
	if err != nil {
		return err
	}
	s.st = st
	return nil
}

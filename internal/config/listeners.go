package config

import (
	"errors"
	"fmt"
	"net"
	"strings"
)

// SampleSecrets are the secrets Janus's sample configuration files publish: janus.jcfg's admin_secret
// (janusoverlord), api_secret (janusrocks) and token_auth_secret (janus); the plugins' room secrets
// (adminpwd) and admin_key (supersecret). Anyone can try them, so strata refuses them on a listener
// that is reachable from other machines (see checkSampleSecrets).
var SampleSecrets = []string{"janusoverlord", "janusrocks", "janus", "adminpwd", "supersecret"}

// IsSampleSecret reports whether s is one of SampleSecrets (case-insensitively: a capital letter
// does not make a published password private).
func IsSampleSecret(s string) bool {
	for _, w := range SampleSecrets {
		if strings.EqualFold(s, w) {
			return true
		}
	}
	return false
}

// IsLoopback reports whether a listen address only accepts connections from this machine: its host is
// a loopback IP (127.0.0.0/8, ::1) or "localhost". An empty host, 0.0.0.0 and :: listen on every
// interface; any other name or address may be reachable from elsewhere, and so is not loopback.
func IsLoopback(listen string) bool {
	host, _, err := net.SplitHostPort(listen)
	if err != nil {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	host, _, _ = strings.Cut(host, "%") // a zone does not change the address
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// namedAddr is an enabled listener, by its option path, for error messages.
type namedAddr struct{ option, addr string }

// adminListeners are the enabled listeners that serve the admin API.
func (t Transports) adminListeners() []namedAddr {
	var ls []namedAddr
	if t.Admin.Enabled {
		ls = append(ls, namedAddr{"transports.admin.listen", t.Admin.Listen})
	}
	if t.Admin.HTTPS.Enabled {
		ls = append(ls, namedAddr{"transports.admin.https.listen", t.Admin.HTTPS.Listen})
	}
	if t.Admin.WebSocket.Enabled {
		ls = append(ls, namedAddr{"transports.admin.websocket.listen", t.Admin.WebSocket.Listen})
	}
	if t.Admin.WebSocket.WSS.Enabled {
		ls = append(ls, namedAddr{"transports.admin.websocket.wss.listen", t.Admin.WebSocket.WSS.Listen})
	}
	return ls
}

// apiListeners are the enabled listeners that serve the Janus API (and so the plugins' requests).
func (t Transports) apiListeners() []namedAddr {
	var ls []namedAddr
	if t.HTTP.Enabled {
		ls = append(ls, namedAddr{"transports.http.listen", t.HTTP.Listen})
	}
	if t.HTTP.HTTPS.Enabled {
		ls = append(ls, namedAddr{"transports.http.https.listen", t.HTTP.HTTPS.Listen})
	}
	if t.WebSocket.Enabled {
		ls = append(ls, namedAddr{"transports.websocket.listen", t.WebSocket.Listen})
	}
	if t.WebSocket.WSS.Enabled {
		ls = append(ls, namedAddr{"transports.websocket.wss.listen", t.WebSocket.WSS.Listen})
	}
	return ls
}

// exposed returns the first listener that is not loopback, if any.
func exposed(ls []namedAddr) (namedAddr, bool) {
	for _, l := range ls {
		if !IsLoopback(l.addr) {
			return l, true
		}
	}
	return namedAddr{}, false
}

// checkSampleSecrets refuses a sample secret that protects something reachable from other machines.
// Each secret is judged by the listeners its requests arrive on: admin_secret by the admin listeners;
// api_secret, tokens, the videoroom's admin_key and its rooms' secrets by the Janus API listeners
// (HTTP and WebSocket, plain and secure). The admin API's message_plugin reaches the plugins too, but
// only past admin_secret, which is checked on its own.
func (c *Config) checkSampleSecrets() []error {
	var errs []error
	refuse := func(option, secret string, ls []namedAddr) {
		if !IsSampleSecret(secret) {
			return
		}
		if l, ok := exposed(ls); ok {
			errs = append(errs, fmt.Errorf("%s: %q is a sample secret from Janus's documentation, and %s %q is not a loopback address: "+
				"anyone who reaches it can try it. Choose your own secret (\"\" generates one where the option allows it), or listen on 127.0.0.1",
				option, secret, l.option, l.addr))
		}
	}
	t := c.Transports
	refuse("transports.admin.admin_secret", t.Admin.AdminSecret, t.adminListeners())
	api := t.apiListeners()
	refuse("general.api_secret", c.General.APISecret, api)
	for _, tok := range c.General.Tokens {
		refuse("general.tokens", tok, api)
	}
	refuse("plugins.videoroom.admin_key", c.Plugins.VideoRoom.AdminKey, api)
	for _, r := range c.Plugins.VideoRoom.Rooms {
		refuse(fmt.Sprintf("plugins.videoroom.rooms: room %d: secret", r.ID), r.Secret, api)
	}
	refuse("plugins.audiobridge.admin_key", c.Plugins.AudioBridge.AdminKey, api)
	for _, r := range c.Plugins.AudioBridge.Rooms {
		refuse(fmt.Sprintf("plugins.audiobridge.rooms: room %d: secret", r.ID), r.Secret, api)
	}
	return errs
}

// validate checks the listeners' timeouts and secure listeners.
func (t Transports) validate() []error {
	var errs []error
	if t.Timeouts.ReadHeader < 0 || t.Timeouts.Read < 0 || t.Timeouts.Idle < 0 {
		errs = append(errs, errors.New("transports.timeouts: read_header, read and idle must not be negative"))
	}
	for _, s := range []struct {
		option string
		l      TLSListener
	}{{"transports.http.https", t.HTTP.HTTPS}, {"transports.websocket.wss", t.WebSocket.WSS}, {"transports.admin.https", t.Admin.HTTPS},
		{"transports.admin.websocket.wss", t.Admin.WebSocket.WSS}} {
		if err := s.l.validate(s.option); err != nil {
			errs = append(errs, err)
		}
	}
	if t.Admin.Metrics && strings.TrimRight(t.Admin.BasePath, "/") == MetricsPath {
		errs = append(errs, fmt.Errorf("transports.admin: base_path %s is where the metrics are served (metrics: true)", MetricsPath))
	}
	if t.Admin.Dashboard && strings.TrimRight(t.Admin.BasePath, "/") == DashboardPath {
		errs = append(errs, fmt.Errorf("transports.admin: base_path %s is where the dashboard is served (dashboard: true)", DashboardPath))
	}
	return errs
}

func (l TLSListener) validate(option string) error {
	if !l.Enabled {
		return nil
	}
	files := l.CertFile != "" || l.KeyFile != ""
	switch {
	case l.Listen == "":
		return fmt.Errorf("%s: listen must be set", option)
	case files && l.SelfSigned:
		return fmt.Errorf("%s: set cert_file and key_file, or self_signed, not both", option)
	case files && (l.CertFile == "" || l.KeyFile == ""):
		return fmt.Errorf("%s: cert_file and key_file go together", option)
	case !files && !l.SelfSigned:
		return fmt.Errorf("%s: needs a certificate: cert_file and key_file, or self_signed: true", option)
	}
	return nil
}

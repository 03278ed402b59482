package siplab

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"text/template"
	"time"
)

// kamailioModules is where Debian's kamailio package keeps its modules.
const kamailioModules = "/usr/lib/x86_64-linux-gnu/kamailio/modules/"

// kamailioCfg is the registrar and proxy: REGISTER and INVITE/MESSAGE/INFO... outside a dialog are
// digest-authenticated against the users' static passwords (pv_auth_check with the password
// looked up from the From user, so there is no database), locations are kept in memory (usrloc
// db_mode 0), the proxy record-routes so every in-dialog request (re-INVITE for hold, INFO for
// DTMF, BYE from either side) passes through it, and requests to a registered user are relayed to
// its contact.
var kamailioCfg = template.Must(template.New("kamailio.cfg").Parse(`#!KAMAILIO
debug=2
log_stderror=yes
log_prefix="{{"{"}}$mt $hdr(CSeq) $ci} "
children=1
disable_tcp=yes
auto_aliases=no
listen=udp:{{.IP}}:5060
alias={{.IP}}:5060
mpath="{{.Modules}}"

loadmodule "tm.so"
loadmodule "sl.so"
loadmodule "rr.so"
loadmodule "pv.so"
loadmodule "maxfwd.so"
loadmodule "usrloc.so"
loadmodule "registrar.so"
loadmodule "textops.so"
loadmodule "siputils.so"
loadmodule "xlog.so"
loadmodule "sanity.so"
loadmodule "auth.so"

modparam("usrloc", "db_mode", 0)
modparam("rr", "enable_full_lr", 1)
modparam("rr", "append_fromtag", 1)
modparam("registrar", "max_expires", 3600)
modparam("auth", "nonce_expire", 300)

request_route {
	if (!mf_process_maxfwd_header("10")) {
		sl_send_reply("483", "Too Many Hops");
		exit;
	}
	if (!sanity_check()) {
		exit;
	}
	if (is_method("CANCEL")) {
		if (t_check_trans()) {
			t_relay();
		}
		exit;
	}
	if (has_totag()) {
		if (loose_route()) {
			t_relay();
			exit;
		}
		if (is_method("ACK")) {
			if (t_check_trans()) {
				t_relay();
			}
			exit;
		}
		sl_send_reply("404", "Not here");
		exit;
	}
	t_check_trans();
	route(AUTH);
	if (is_method("REGISTER")) {
		if (!save("location")) {
			sl_reply_error();
		}
		exit;
	}
	if (is_method("INVITE|SUBSCRIBE|REFER")) {
		record_route();
	}
	if (!lookup("location")) {
		xlog("L_INFO", "no contact for $ru\n");
		sl_send_reply("404", "Not Found");
		exit;
	}
	if (!t_relay()) {
		sl_reply_error();
	}
	exit;
}

# AUTH challenges every request outside a dialog (REGISTER with 401, the rest with 407) until
# it carries the right digest for its From user, then drops the credentials before relaying.
route[AUTH] {
	$var(pw) = "";
	switch ($fU) {
{{- range .Users}}
	case "{{.Name}}":
		$var(pw) = "{{.Password}}";
		break;
{{- end}}
	}
	if ($var(pw) == "" || !pv_auth_check("$fd", "$var(pw)", "0", "1")) {
		xlog("L_INFO", "challenging $fU for $rm\n");
		auth_challenge("$fd", "1");
		exit;
	}
	consume_credentials();
}
`))

// startKamailio writes the configuration and runs kamailio in the foreground in its namespace,
// waiting until it answers on its SIP port.
func (l *Lab) startKamailio() error {
	ns, addr, err := l.net.addComponent("kam")
	if err != nil {
		return err
	}
	dir := filepath.Join(l.dir, "kamailio")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var b strings.Builder
	data := struct {
		IP, Modules string
		Users       []User
	}{addr, kamailioModules, l.Users}
	if err := kamailioCfg.Execute(&b, data); err != nil {
		return err
	}
	cfg := filepath.Join(dir, "kamailio.cfg")
	if err := os.WriteFile(cfg, []byte(b.String()), 0o644); err != nil {
		return err
	}
	// -DD: stay in the foreground as the main process (the PID namespace's init); -E: log to
	// stderr; -Y: runtime files in the lab's directory, not /run/kamailio.
	p, err := l.net.start("kamailio", ns, "kamailio", "-DD", "-E", "-f", cfg, "-Y", dir, "-m", "32", "-M", "8")
	if err != nil {
		return err
	}
	l.kamailio = p
	l.Registrar = net.JoinHostPort(addr, "5060")
	l.Domain = addr
	return waitUDPService(p, ns, 5060, 10*time.Second)
}

// waitUDPService waits until the process listens on the UDP port in its namespace.
func waitUDPService(p *proc, ns string, port int, timeout time.Duration) error {
	return waitFor(timeout, func() (bool, error) {
		if p.exited() {
			return false, fmt.Errorf("%s exited:\n%s", p.name, p.tail())
		}
		out, err := runIn(ns, "ss", "-Hlnu", fmt.Sprintf("sport = :%d", port))
		return err == nil && strings.TrimSpace(out) != "", nil
	}, p.name+" did not open its port")
}

func waitFor(timeout time.Duration, ready func() (bool, error), what string) error {
	deadline := time.Now().Add(timeout)
	for {
		ok, err := ready()
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("siplab: %s within %v", what, timeout)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

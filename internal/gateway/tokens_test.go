package gateway

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/strata-rtc/strata/internal/config"
	"github.com/strata-rtc/strata/internal/gateway/gatewaytest"
	"github.com/strata-rtc/strata/internal/janus"
)

func tokenAuth(c *config.Config) {
	c.General.TokenAuth = true
	c.General.Tokens = []string{"configured"}
}

// dataPlugins is data.plugins of an add/allow/disallow_token reply.
func dataPlugins(t *testing.T, m janus.Message) []string {
	t.Helper()
	if m.Janus != "success" {
		t.Fatalf("want success, got %s", janus.Encode(m))
	}
	got := roundTrip(t, m)
	data, _ := got["data"].(map[string]any)
	list, ok := data["plugins"].([]any)
	if !ok {
		t.Fatalf("no data.plugins in %s", janus.Encode(m))
	}
	var out []string
	for _, p := range list {
		out = append(out, p.(string))
	}
	return out
}

func TestTokenVerbs(t *testing.T) {
	e := newEnv(t, tokenAuth)
	all := []string{gatewaytest.FailingPackage, gatewaytest.EchoPackage}
	slices.Sort(all)

	if got := dataPlugins(t, e.admin(`{"janus":"add_token","transaction":"a","token":"t1",{SECRET}}`, 0, 0)); !slices.Equal(got, all) {
		t.Errorf("add_token without plugins allows %v, want every plugin %v", got, all)
	}
	got := dataPlugins(t, e.admin(`{"janus":"add_token","transaction":"a","token":"t2","plugins":["`+gatewaytest.EchoPackage+`","janus.plugin.nope",7],{SECRET}}`, 0, 0))
	if !slices.Equal(got, []string{gatewaytest.EchoPackage}) {
		t.Errorf("add_token with plugins allows %v, want the echo only (unknown ones skipped, as Janus)", got)
	}
	wantCode(t, e.admin(`{"janus":"add_token","transaction":"a","token":"t2",{SECRET}}`, 0, 0), 490)
	wantCode(t, e.admin(`{"janus":"add_token","transaction":"a",{SECRET}}`, 0, 0), 456)
	wantCode(t, e.admin(`{"janus":"add_token","transaction":"a","token":5,{SECRET}}`, 0, 0), 467)
	wantCode(t, e.admin(`{"janus":"add_token","transaction":"a","token":"t3","plugins":"x",{SECRET}}`, 0, 0), 467)
	wantCode(t, e.admin(`{"janus":"add_token","transaction":"a","token":"t3","plugins":null,{SECRET}}`, 0, 0), 467)
	wantCode(t, e.admin(`{"janus":"add_token","transaction":"a","token":"t3"}`, 0, 0), 403)
	sid := dataID(t, e.do(`{"janus":"create","transaction":"c","token":"configured"}`, 0, 0))
	wantCode(t, e.admin(`{"janus":"add_token","transaction":"a","token":"t3","session_id":{S},{SECRET}}`, sid, 0), 457)

	if got := dataPlugins(t, e.admin(`{"janus":"allow_token","transaction":"a","token":"t2","plugins":["`+gatewaytest.FailingPackage+`"],{SECRET}}`, 0, 0)); !slices.Equal(got, all) {
		t.Errorf("allow_token: %v, want %v", got, all)
	}
	if got := dataPlugins(t, e.admin(`{"janus":"disallow_token","transaction":"a","token":"t2","plugins":["`+gatewaytest.EchoPackage+`"],{SECRET}}`, 0, 0)); !slices.Equal(got, []string{gatewaytest.FailingPackage}) {
		t.Errorf("disallow_token: %v", got)
	}
	wantCode(t, e.admin(`{"janus":"allow_token","transaction":"a","token":"t2",{SECRET}}`, 0, 0), 467)
	wantCode(t, e.admin(`{"janus":"allow_token","transaction":"a","token":"t2","plugins":[],{SECRET}}`, 0, 0), 467)
	wantCode(t, e.admin(`{"janus":"allow_token","transaction":"a","token":"t2","plugins":["janus.plugin.nope"],{SECRET}}`, 0, 0), 467)
	wantCode(t, e.admin(`{"janus":"allow_token","transaction":"a","token":"nope","plugins":["`+gatewaytest.EchoPackage+`"],{SECRET}}`, 0, 0), 470)

	m := e.admin(`{"janus":"list_tokens","transaction":"l",{SECRET}}`, 0, 0)
	got2 := roundTrip(t, m)
	tokens := got2["data"].(map[string]any)["tokens"].([]any)
	var names []string
	for _, tk := range tokens {
		names = append(names, tk.(map[string]any)["token"].(string))
	}
	if m.Transaction != "l" || !slices.Equal(names, []string{"configured", "t1", "t2"}) {
		t.Errorf("list_tokens: %s", janus.Encode(m))
	}
	if m := e.admin(`{"janus":"remove_token","transaction":"r","token":"t1",{SECRET}}`, 0, 0); m.Janus != "success" {
		t.Errorf("remove_token: %s", janus.Encode(m))
	}
	wantCode(t, e.admin(`{"janus":"remove_token","transaction":"r","token":"t1",{SECRET}}`, 0, 0), 490)
	wantCode(t, e.admin(`{"janus":"remove_token","transaction":"r",{SECRET}}`, 0, 0), 456)
}

func TestTokenVerbsNeedTokenAuth(t *testing.T) {
	e := newEnv(t, nil)
	for _, verb := range []string{"add_token", "list_tokens", "remove_token", "allow_token", "disallow_token"} {
		m := e.admin(`{"janus":"`+verb+`","transaction":"x","token":"t","plugins":["`+gatewaytest.EchoPackage+`"],{SECRET}}`, 0, 0)
		wantCode(t, m, 490)
		if m.Error.Reason != "Stored-Token based authentication disabled" {
			t.Errorf("%s: %q", verb, m.Error.Reason)
		}
	}
}

// TestTokenEnforcement: with token_auth, the Janus API needs a known token, and a token limited
// to some plugins attaches to those only (405), until allow_token; remove_token revokes it.
func TestTokenEnforcement(t *testing.T) {
	e := newEnv(t, tokenAuth)
	wantCode(t, e.do(`{"janus":"create","transaction":"c"}`, 0, 0), 403)
	wantCode(t, e.do(`{"janus":"create","transaction":"c","token":"added"}`, 0, 0), 403)
	e.admin(`{"janus":"add_token","transaction":"a","token":"added","plugins":["`+gatewaytest.FailingPackage+`"],{SECRET}}`, 0, 0)
	sid := dataID(t, e.do(`{"janus":"create","transaction":"c","token":"added"}`, 0, 0))
	attachEcho := `{"janus":"attach","transaction":"a","session_id":{S},"plugin":"` + gatewaytest.EchoPackage + `","token":"added"}`
	m := e.do(attachEcho, sid, 0)
	wantCode(t, m, 405)
	if m.Error.Reason != "Provided token can't access plugin '"+gatewaytest.EchoPackage+"'" {
		t.Errorf("reason %q", m.Error.Reason)
	}
	wantCode(t, e.do(`{"janus":"keepalive","transaction":"k","session_id":{S}}`, sid, 0), 403)
	e.admin(`{"janus":"allow_token","transaction":"a","token":"added","plugins":["`+gatewaytest.EchoPackage+`"],{SECRET}}`, 0, 0)
	dataID(t, e.do(attachEcho, sid, 0))
	// The configured token reaches every plugin.
	dataID(t, e.do(`{"janus":"attach","transaction":"a","session_id":{S},"plugin":"`+gatewaytest.EchoPackage+`","token":"configured"}`, sid, 0))
	e.admin(`{"janus":"remove_token","transaction":"r","token":"added",{SECRET}}`, 0, 0)
	wantCode(t, e.do(attachEcho, sid, 0), 403)
}

// TestStartStopPcapErrors covers start_pcap and stop_pcap on a handle without a PeerConnection: the
// file gets its header, and every bad request a clear Janus error.
func TestStartStopPcapErrors(t *testing.T) {
	dir := t.TempDir()
	e := newEnv(t, func(c *config.Config) { c.Transports.Admin.PcapDir = dir })
	sid := e.create()
	hid := e.attach(sid)
	const at = `"session_id":{S},"handle_id":{H},{SECRET}`
	wantCode(t, e.admin(`{"janus":"stop_pcap","transaction":"p",`+at+`}`, sid, hid), 490)
	wantCode(t, e.admin(`{"janus":"start_pcap","transaction":"p","folder":7,`+at+`}`, sid, hid), 467)
	wantCode(t, e.admin(`{"janus":"start_pcap","transaction":"p","truncate":-1,`+at+`}`, sid, hid), 467)
	wantCode(t, e.admin(`{"janus":"start_pcap","transaction":"p","truncate":"x",`+at+`}`, sid, hid), 467)
	for _, bad := range []string{`"filename":"../out.pcap"`, `"folder":"/tmp"`, `"folder":"a/../../b"`, `"filename":"/etc/x.pcap"`, `"filename":""`} {
		m := e.admin(`{"janus":"start_pcap","transaction":"p",`+bad+`,`+at+`}`, sid, hid)
		if bad == `"filename":""` { // a random name inside the directory: fine
			if m.Janus != "success" {
				t.Fatalf("start_pcap with an empty filename: %s", janus.Encode(m))
			}
			e.admin(`{"janus":"stop_pcap","transaction":"p",`+at+`}`, sid, hid)
			continue
		}
		wantCode(t, m, 490)
	}
	wantCode(t, e.admin(`{"janus":"start_pcap","transaction":"p",{SECRET}}`, 0, 0), 457)
	wantCode(t, e.admin(`{"janus":"start_pcap","transaction":"p","session_id":{S},{SECRET}}`, sid, 0), 457)
	wantCode(t, e.admin(`{"janus":"start_pcap","transaction":"p","session_id":{S},"handle_id":5,{SECRET}}`, sid, 0), 459)

	m := e.admin(`{"janus":"start_pcap","transaction":"p","folder":"sub","filename":"h.pcap","truncate":64,`+at+`}`, sid, hid)
	if m.Janus != "success" || m.Transaction != "p" {
		t.Fatalf("start_pcap: %s", janus.Encode(m))
	}
	wantCode(t, e.admin(`{"janus":"start_pcap","transaction":"p","filename":"other.pcap",`+at+`}`, sid, hid), 490)
	info := roundTrip(t, e.admin(`{"janus":"handle_info","transaction":"h",`+at+`}`, sid, hid))["info"].(map[string]any)
	if info["dump-to-pcap"] != true || info["pcap-file"] != filepath.Join(dir, "sub", "h.pcap") {
		t.Errorf("handle_info during a capture: dump-to-pcap %v, pcap-file %v", info["dump-to-pcap"], info["pcap-file"])
	}
	if m := e.admin(`{"janus":"stop_pcap","transaction":"q",`+at+`}`, sid, hid); m.Janus != "success" {
		t.Fatalf("stop_pcap: %s", janus.Encode(m))
	}
	if info := roundTrip(t, e.admin(`{"janus":"handle_info","transaction":"h",`+at+`}`, sid, hid))["info"].(map[string]any); info["dump-to-pcap"] != nil {
		t.Errorf("handle_info after stop_pcap: dump-to-pcap %v", info["dump-to-pcap"])
	}
	if st, err := os.Stat(filepath.Join(dir, "sub", "h.pcap")); err != nil || st.Size() != 24 {
		t.Fatalf("capture file: %v %v, want the 24-byte pcap header", st, err)
	}
	// The file exists now: a second capture to it is refused rather than appended to.
	wantCode(t, e.admin(`{"janus":"start_pcap","transaction":"p","folder":"sub","filename":"h.pcap",`+at+`}`, sid, hid), 490)
	// A capture still running when the handle goes is closed with it.
	e.admin(`{"janus":"start_pcap","transaction":"p","filename":"detached.pcap",`+at+`}`, sid, hid)
	e.do(`{"janus":"detach","transaction":"d","session_id":{S},"handle_id":{H}}`, sid, hid)
	if st, err := os.Stat(filepath.Join(dir, "detached.pcap")); err != nil || st.Size() != 24 {
		t.Fatalf("capture of a detached handle: %v %v", st, err)
	}
}

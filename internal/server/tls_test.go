package server

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/strata-rtc/strata/internal/certs"
	"github.com/strata-rtc/strata/internal/config"
)

// certPair is a generated certificate for 127.0.0.1, as PEM and parsed.
type certPair struct {
	certPEM, keyPEM []byte
	leaf            *x509.Certificate
}

func newCertPair(t *testing.T) certPair {
	t.Helper()
	c, k, err := certs.SelfSigned([]string{"127.0.0.1", "localhost"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	kp, err := tls.X509KeyPair(c, k)
	if err != nil {
		t.Fatal(err)
	}
	return certPair{c, k, kp.Leaf}
}

// write puts the pair where the configuration points (replacing the files, as a renewal does).
func (p certPair) write(t *testing.T, certFile, keyFile string) {
	t.Helper()
	if err := os.WriteFile(certFile, p.certPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, p.keyPEM, 0o600); err != nil {
		t.Fatal(err)
	}
}

// secureConfig enables the three secure listeners on free loopback ports with one certificate's files.
func secureConfig(t *testing.T, certFile, keyFile string) *config.Config {
	cfg := testConfig(t)
	for _, l := range []*config.TLSListener{&cfg.Transports.HTTP.HTTPS, &cfg.Transports.WebSocket.WSS, &cfg.Transports.Admin.HTTPS} {
		*l = config.TLSListener{Enabled: true, Listen: "127.0.0.1:0", CertFile: certFile, KeyFile: keyFile}
	}
	return cfg
}

func trusting(certs ...*x509.Certificate) *tls.Config {
	pool := x509.NewCertPool()
	for _, c := range certs {
		pool.AddCert(c)
	}
	return &tls.Config{RootCAs: pool}
}

// dialWSS opens a Janus API WebSocket over TLS.
func dialWSS(t *testing.T, addr string, tc *tls.Config) *websocket.Conn {
	t.Helper()
	d := websocket.Dialer{TLSClientConfig: tc, Subprotocols: []string{"janus-protocol"}, HandshakeTimeout: 5 * time.Second}
	ws, _, err := d.Dial("wss://"+addr, nil)
	if err != nil {
		t.Fatalf("wss://%s: %v", addr, err)
	}
	t.Cleanup(func() { ws.Close() })
	return ws
}

// wsCall sends one request on a WebSocket and returns the reply.
func wsCall(t *testing.T, ws *websocket.Conn, req string) map[string]any {
	t.Helper()
	_ = ws.SetReadDeadline(time.Now().Add(5 * time.Second))
	if err := ws.WriteMessage(websocket.TextMessage, []byte(req)); err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := ws.ReadJSON(&m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestSecureListenersServeTheAPI: with a certificate from files, the HTTPS listener serves the API and
// the demos, the WSS listener the WebSocket API, the admin HTTPS listener the admin API; the plain
// listeners keep serving beside them, and the demos' client configuration reports the secure ports.
func TestSecureListenersServeTheAPI(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	a := newCertPair(t)
	a.write(t, certFile, keyFile)
	s := startServer(t, secureConfig(t, certFile, keyFile))
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: trusting(a.leaf), ForceAttemptHTTP2: true}, Timeout: 10 * time.Second}

	res, err := client.Post("https://"+s.Addr(HTTPS)+"/janus", "application/json", strings.NewReader(`{"janus":"info","transaction":"i"}`))
	if err != nil {
		t.Fatal(err)
	}
	var info map[string]any
	_ = json.NewDecoder(res.Body).Decode(&info)
	res.Body.Close()
	if info["janus"] != "server_info" || res.ProtoMajor != 2 {
		t.Fatalf("info over HTTPS: %s %v, want server_info over HTTP/2", res.Proto, info)
	}
	// The WSS listener does not offer HTTP/2: a client must not try WebSocket over it.
	alpn := trusting(a.leaf)
	alpn.NextProtos = []string{"h2", "http/1.1"}
	if c, err := tls.Dial("tcp", s.Addr(WSS), alpn); err != nil {
		t.Fatal(err)
	} else if p := c.ConnectionState().NegotiatedProtocol; p == "h2" {
		t.Fatalf("the WSS listener negotiated %q", p)
	} else {
		c.Close()
	}
	res, err = client.Get("https://" + s.Addr(HTTPS) + "/strata-config.json")
	if err != nil {
		t.Fatal(err)
	}
	var cc map[string]int
	_ = json.NewDecoder(res.Body).Decode(&cc)
	res.Body.Close()
	if cc["https_port"] != s.port(HTTPS) || cc["wss_port"] != s.port(WSS) || cc["ws_port"] != s.port(WebSocket) || cc["https_port"] == 0 {
		t.Fatalf("client config %v, want https_port %d, wss_port %d, ws_port %d", cc, s.port(HTTPS), s.port(WSS), s.port(WebSocket))
	}

	ws := dialWSS(t, s.Addr(WSS), trusting(a.leaf))
	if m := wsCall(t, ws, `{"janus":"create","transaction":"c"}`); m["janus"] != "success" {
		t.Fatalf("create over WSS: %v", m)
	}

	res, err = client.Post("https://"+s.Addr(AdminHTTPS)+"/admin", "application/json",
		strings.NewReader(`{"janus":"list_sessions","transaction":"l","admin_secret":"`+testAdminSecret+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	var list struct {
		Janus    string   `json:"janus"`
		Sessions []uint64 `json:"sessions"`
	}
	_ = json.NewDecoder(res.Body).Decode(&list)
	res.Body.Close()
	if list.Janus != "success" || len(list.Sessions) != 1 {
		t.Fatalf("admin over HTTPS: %+v, want the WSS session listed", list)
	}
	if m := post(t, "http://"+s.HTTPAddr()+"/janus", `{"janus":"ping","transaction":"p"}`); m["janus"] != "pong" {
		t.Fatalf("the plain listener beside the secure one: %v", m)
	}
}

// TestCertificateReload: a renewed certificate reaches new connections after ReloadCertificates
// (SIGHUP), while a WebSocket and a kept-alive HTTPS connection opened before carry on with the old
// one; a broken renewal is refused and the certificate in use stays.
func TestCertificateReload(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	a, b := newCertPair(t), newCertPair(t)
	a.write(t, certFile, keyFile)
	s := startServer(t, secureConfig(t, certFile, keyFile))
	both := trusting(a.leaf, b.leaf)

	ws := dialWSS(t, s.Addr(WSS), both)
	created := wsCall(t, ws, `{"janus":"create","transaction":"c"}`)
	sid := created["data"].(map[string]any)["id"].(float64)
	kept, err := tls.Dial("tcp", s.Addr(HTTPS), both)
	if err != nil {
		t.Fatal(err)
	}
	defer kept.Close()
	keptReader := bufio.NewReader(kept)
	httpPing(t, kept, keptReader)

	b.write(t, certFile, keyFile)
	if err := s.ReloadCertificates(); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{HTTPS, WSS, AdminHTTPS} {
		if got := servedCert(t, s.Addr(name), both); !got.Equal(b.leaf) {
			t.Errorf("%s: a new connection after the reload gets the old certificate", name)
		}
	}
	// The connections opened before the reload are still up, on the old certificate.
	if m := wsCall(t, ws, `{"janus":"keepalive","transaction":"k","session_id":`+jsonNumber(sid)+`}`); m["janus"] != "ack" {
		t.Fatalf("the WebSocket opened before the reload: %v", m)
	}
	httpPing(t, kept, keptReader)
	if !kept.ConnectionState().PeerCertificates[0].Equal(a.leaf) {
		t.Error("the kept-alive connection changed certificate")
	}

	// A half-written renewal: the reload fails, and the listeners keep the certificate in use.
	if err := os.WriteFile(certFile, []byte("-----BEGIN CERTIFICATE-----\ngarbage\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := s.ReloadCertificates(); err == nil {
		t.Fatal("a broken certificate file was accepted")
	}
	if got := servedCert(t, s.Addr(HTTPS), both); !got.Equal(b.leaf) {
		t.Error("a failed reload changed the certificate")
	}
}

func jsonNumber(f float64) string { b, _ := json.Marshal(uint64(f)); return string(b) }

// httpPing sends a Janus ping on an open HTTP/1.1 connection and checks the pong.
func httpPing(t *testing.T, c io.Writer, r *bufio.Reader) {
	t.Helper()
	body := `{"janus":"ping","transaction":"p"}`
	req, _ := http.NewRequest(http.MethodPost, "https://strata/janus", strings.NewReader(body))
	var buf bytes.Buffer
	_ = req.Write(&buf)
	if _, err := c.Write(buf.Bytes()); err != nil {
		t.Fatal(err)
	}
	res, err := http.ReadResponse(r, req)
	if err != nil {
		t.Fatal(err)
	}
	reply, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if !strings.Contains(string(reply), `"pong"`) {
		t.Fatalf("ping: %s", reply)
	}
}

// servedCert is the certificate a new TLS connection to addr gets.
func servedCert(t *testing.T, addr string, tc *tls.Config) *x509.Certificate {
	t.Helper()
	c, err := tls.Dial("tcp", addr, tc)
	if err != nil {
		t.Fatalf("%s: %v", addr, err)
	}
	defer c.Close()
	return c.ConnectionState().PeerCertificates[0]
}

// TestSelfSignedCertificate: self_signed listeners share one generated certificate, for the
// configured hosts, that a client trusting it can use for HTTPS and WSS alike.
func TestSelfSignedCertificate(t *testing.T) {
	cfg := testConfig(t)
	cfg.Transports.SelfSignedHosts = []string{"127.0.0.1", "strata.test"}
	cfg.Transports.HTTP.HTTPS = config.TLSListener{Enabled: true, Listen: "127.0.0.1:0", SelfSigned: true}
	cfg.Transports.WebSocket.WSS = config.TLSListener{Enabled: true, Listen: "127.0.0.1:0", SelfSigned: true}
	s := startServer(t, cfg)

	insecure := &tls.Config{InsecureSkipVerify: true} // only to fetch the certificate
	leaf := servedCert(t, s.Addr(HTTPS), insecure)
	if !servedCert(t, s.Addr(WSS), insecure).Equal(leaf) {
		t.Fatal("the self-signed listeners present different certificates")
	}
	if err := leaf.VerifyHostname("strata.test"); err != nil {
		t.Error(err)
	}
	if err := leaf.VerifyHostname("127.0.0.1"); err != nil {
		t.Error(err)
	}
	ws := dialWSS(t, s.Addr(WSS), trusting(leaf)) // verified against the generated certificate
	if m := wsCall(t, ws, `{"janus":"ping","transaction":"p"}`); m["janus"] != "pong" {
		t.Fatalf("ping over WSS: %v", m)
	}
	if err := s.ReloadCertificates(); err != nil {
		t.Fatalf("reload with only a generated certificate: %v", err)
	}
	if !servedCert(t, s.Addr(HTTPS), insecure).Equal(leaf) {
		t.Error("a reload replaced the generated certificate (a browser would have to accept it again)")
	}
}

// TestMissingCertificateFile: a secure listener whose files cannot be read stops the start with an
// error naming the listener.
func TestMissingCertificateFile(t *testing.T) {
	cfg := testConfig(t)
	cfg.Transports.WebSocket.WSS = config.TLSListener{Enabled: true, Listen: "127.0.0.1:0", CertFile: "/nonexistent/cert.pem", KeyFile: "/nonexistent/key.pem"}
	s, err := New(cfg, slog.New(slog.DiscardHandler), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err == nil || !strings.Contains(err.Error(), "wss") {
		t.Fatalf("Start: %v, want an error naming the wss listener", err)
	}
}

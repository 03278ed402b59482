package server

import (
	"bufio"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/strata-rtc/strata/internal/config"
)

// shortTimeouts is a configuration with read timeouts far below the long-poll hold.
func shortTimeouts(t *testing.T) *config.Config {
	cfg := testConfig(t)
	cfg.Transports.Timeouts = config.ListenerTimeouts{ReadHeader: 300 * time.Millisecond, Read: 500 * time.Millisecond, Idle: 500 * time.Millisecond}
	cfg.Transports.HTTP.LongPollTimeout = 1500 * time.Millisecond
	return cfg
}

// TestSlowClientsAreCut: a client that sends its request body a byte at a time, or its headers not at
// all, loses the connection once the read timeouts pass, instead of holding it for as long as it
// likes; so does a kept-alive connection left idle. The limits are generous (the test's own
// deadline is 10 s), so a loaded machine does not make this flaky.
func TestSlowClientsAreCut(t *testing.T) {
	s := startServer(t, shortTimeouts(t))
	addr := s.HTTPAddr()

	slowBody := dial(t, addr)
	fmt.Fprintf(slowBody, "POST /janus HTTP/1.1\r\nHost: strata\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{")
	go func() { // one byte every 50 ms: the body would take 50 s
		for {
			time.Sleep(50 * time.Millisecond)
			if _, err := slowBody.Write([]byte(" ")); err != nil {
				return
			}
		}
	}()
	waitClosed(t, "a body sent a byte at a time", slowBody)

	silent := dial(t, addr)
	fmt.Fprintf(silent, "GET /janus/info HTTP/1.1\r\nHost: strata\r\n") // and never the blank line
	waitClosed(t, "headers never finished", silent)

	idle := dial(t, addr)
	fmt.Fprintf(idle, "GET /janus/info HTTP/1.1\r\nHost: strata\r\n\r\n")
	r := bufio.NewReader(idle)
	res, err := http.ReadResponse(r, nil)
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("GET /janus/info: %v %v", res, err)
	}
	_, _ = io.Copy(io.Discard, res.Body)
	waitClosedReader(t, "a kept-alive connection left idle", idle, r)
}

// TestTimeoutsSpareLongPollsAndWebSockets: a long-poll held longer than the read timeout answers
// normally (twice on the same connection, over HTTP/1.1 and over HTTPS with HTTP/2), and a WebSocket
// idle for longer than every timeout still answers: only the reading of a request is timed, not what
// the server does with it.
func TestTimeoutsSpareLongPollsAndWebSockets(t *testing.T) {
	cfg := shortTimeouts(t)
	cfg.Transports.SelfSignedHosts = []string{"127.0.0.1"}
	cfg.Transports.HTTP.HTTPS = config.TLSListener{Enabled: true, Listen: "127.0.0.1:0", SelfSigned: true}
	s := startServer(t, cfg)
	created := post(t, "http://"+s.HTTPAddr()+"/janus", `{"janus":"create","transaction":"c"}`)
	sid := uint64(created["data"].(map[string]any)["id"].(float64))

	plain := &http.Client{Timeout: 10 * time.Second}
	leaf := servedCert(t, s.Addr(HTTPS), &tls.Config{InsecureSkipVerify: true})
	h2 := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: trusting(leaf), ForceAttemptHTTP2: true}}
	for _, url := range []string{"http://" + s.HTTPAddr(), "https://" + s.Addr(HTTPS)} {
		client := plain
		if strings.HasPrefix(url, "https:") {
			client = h2
		}
		for i := range 2 {
			start := time.Now()
			res, err := client.Get(fmt.Sprintf("%s/janus/%d?maxev=1", url, sid))
			if err != nil {
				t.Fatalf("%s long-poll %d: %v", url, i, err)
			}
			var m map[string]any
			_ = json.NewDecoder(res.Body).Decode(&m)
			res.Body.Close()
			if m["janus"] != "keepalive" || time.Since(start) < time.Second {
				t.Fatalf("%s long-poll %d (%s): %v after %v, want a keepalive after the 1.5 s hold", url, i, res.Proto, m, time.Since(start))
			}
		}
	}

	d := websocket.Dialer{Subprotocols: []string{"janus-protocol"}}
	ws, _, err := d.Dial("ws://"+s.WSAddr(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	time.Sleep(1200 * time.Millisecond) // past read_header, read and idle
	if m := wsCall(t, ws, `{"janus":"ping","transaction":"p"}`); m["janus"] != "pong" {
		t.Fatalf("WebSocket after the timeouts: %v", m)
	}
}

func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func waitClosed(t *testing.T, what string, c net.Conn) {
	t.Helper()
	waitClosedReader(t, what, c, c)
}

// waitClosedReader reads (and drops whatever the server answers) until the server closes c.
func waitClosedReader(t *testing.T, what string, c net.Conn, r io.Reader) {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, err := io.Copy(io.Discard, r)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("%s: the connection is still open after 10 s", what)
	}
	if err != nil && !strings.Contains(err.Error(), "reset") {
		t.Fatalf("%s: %v", what, err)
	}
}

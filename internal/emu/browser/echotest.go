package browser

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/strata-rtc/strata/internal/emu/endpoint"
	"github.com/strata-rtc/strata/internal/janusclient"
	"github.com/strata-rtc/strata/internal/rig"
)

// echotest is a `strata serve` in the destination host whose echotest plugin receives the
// browser's video (and echoes it back, as for a real user; strata also caps the browser with its
// own estimate by REMB). The lab signals it over the Janus HTTP API on the host's loopback.
type echotest struct {
	proc      *rig.Process
	dir       string
	http      *http.Client // dials inside the host's namespace
	api       string
	admin     string
	secret    string
	client    *janusclient.Client
	session   *janusclient.Session
	handle    *janusclient.Handle
	closeOnce bool
}

// startEchotest runs strata with its API and admin API on the host's loopback (free ports there)
// and waits until it answers.
func startEchotest(ctx context.Context, host endpoint.Host, opts Options, log io.Writer) (_ *echotest, err error) {
	e := &echotest{}
	defer func() {
		if err != nil {
			err = errors.Join(fmt.Errorf("echotest: %w", err), e.close())
		}
	}()
	if e.dir, err = os.MkdirTemp(opts.WorkDir, "strata-emu-echotest-"); err != nil {
		return nil, err
	}
	if out, err := host.Command(ctx, "ip", "link", "set", "lo", "up").CombinedOutput(); err != nil {
		return nil, fmt.Errorf("loopback up in %s: %v: %s", host.Name(), err, out)
	}
	ports, err := freePorts(host, 2)
	if err != nil {
		return nil, err
	}
	secret := make([]byte, 16)
	_, _ = rand.Read(secret)
	e.secret = hex.EncodeToString(secret)
	e.api = fmt.Sprintf("http://127.0.0.1:%d/janus", ports[0])
	e.admin = fmt.Sprintf("http://127.0.0.1:%d/admin", ports[1])
	// Only what the flow needs listens; recordings (none are made) stay in the flow's directory.
	cfg := fmt.Sprintf(`general: {log_level: warn}
transports:
  http: {listen: "127.0.0.1:%d", demos: false}
  websocket: {enabled: false}
  admin: {listen: "127.0.0.1:%d", admin_secret: %q}
plugins:
  echotest: {recordings_dir: %q}
`, ports[0], ports[1], e.secret, filepath.Join(e.dir, "recordings"))
	path := filepath.Join(e.dir, "strata.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		return nil, err
	}
	// Killed with us if we die (rig.StartCommand says how).
	cmd := host.Command(context.Background(), opts.Strata, "serve", "--config", path)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if e.proc, err = rig.StartCommand("strata", cmd, ""); err != nil {
		return nil, err
	}
	e.http = &http.Client{Timeout: 90 * time.Second, Transport: &http.Transport{
		DialContext: func(ctx context.Context, network, addr string) (c net.Conn, err error) {
			err = host.Do(func() error {
				c, err = (&net.Dialer{}).DialContext(ctx, network, addr)
				return err
			})
			return c, err
		},
	}}
	if err := e.proc.WaitHTTP(ctx, e.http, e.api+"/info"); err != nil {
		return nil, err
	}
	if e.client, err = janusclient.Dial(ctx, e.api, janusclient.WithHTTPClient(e.http)); err != nil {
		return nil, err
	}
	if e.session, err = e.client.Create(ctx); err != nil {
		return nil, fmt.Errorf("create: %w", err)
	}
	if e.handle, err = e.session.Attach(ctx, "janus.plugin.echotest"); err != nil {
		return nil, fmt.Errorf("attach: %w", err)
	}
	return e, nil
}

// freePorts finds n TCP ports free on the host's loopback.
func freePorts(host endpoint.Host, n int) ([]int, error) {
	var ports []int
	err := host.Do(func() error {
		var ls []net.Listener
		defer func() {
			for _, l := range ls {
				_ = l.Close()
			}
		}()
		for range n {
			l, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				return err
			}
			ls = append(ls, l)
			ports = append(ports, l.Addr().(*net.TCPAddr).Port)
		}
		return nil
	})
	return ports, err
}

// call sends the browser's offer to the echotest (video on, audio off) and returns the answer.
func (e *echotest) call(ctx context.Context, offer string) (string, error) {
	ev, err := e.handle.Message(ctx, map[string]any{"audio": false, "video": true},
		&janusclient.JSEP{Type: "offer", SDP: offer})
	if err != nil {
		return "", err
	}
	if ev.JSEP == nil || ev.JSEP.Type != "answer" {
		return "", fmt.Errorf("the echotest's reply carries no answer: %s", ev.Raw)
	}
	return ev.JSEP.SDP, nil
}

// received is strata's count of video bytes received on the handle (the admin API's
// handle_info, webrtc.media[*].in), less hdr bytes of RTP header per packet: strata counts
// headers in, the lab's goodput is payload.
func (e *echotest) received(ctx context.Context, hdr float64) (float64, error) {
	body, _ := json.Marshal(map[string]any{"janus": "handle_info", "transaction": "lab", "admin_secret": e.secret})
	url := fmt.Sprintf("%s/%d/%d", e.admin, e.session.ID, e.handle.ID)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	resp, err := e.http.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var reply struct {
		Janus string `json:"janus"`
		Error *struct {
			Reason string `json:"reason"`
		} `json:"error"`
		Info struct {
			WebRTC struct {
				Media map[string]struct {
					Type string `json:"type"`
					In   struct {
						Packets float64 `json:"packets"`
						Bytes   float64 `json:"bytes"`
					} `json:"in"`
				} `json:"media"`
			} `json:"webrtc"`
		} `json:"info"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&reply); err != nil {
		return 0, fmt.Errorf("handle_info: %w", err)
	}
	if reply.Janus != "success" {
		reason := "no reason"
		if reply.Error != nil {
			reason = reply.Error.Reason
		}
		return 0, fmt.Errorf("handle_info: %s: %s", reply.Janus, reason)
	}
	var payload float64
	for _, m := range reply.Info.WebRTC.Media {
		if strings.EqualFold(m.Type, "video") {
			payload += max(0, m.In.Bytes-hdr*m.In.Packets)
		}
	}
	return payload, nil
}

// close ends the call and strata (SIGTERM, then SIGKILL after 5 s, by its PID) and removes its
// directory.
func (e *echotest) close() error {
	if e.closeOnce {
		return nil
	}
	e.closeOnce = true
	if e.client != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		if e.session != nil {
			_ = e.session.Destroy(ctx)
		}
		cancel()
		_ = e.client.Close()
	}
	var errs []error
	if e.proc != nil {
		_ = e.proc.Stop(5 * time.Second)
	}
	if e.dir != "" {
		errs = append(errs, removeAllRetry(e.dir))
	}
	return errors.Join(errs...)
}

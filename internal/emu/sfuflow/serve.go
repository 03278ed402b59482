package sfuflow

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/strata-rtc/strata/internal/janusclient"
	"github.com/strata-rtc/strata/internal/load/client"
	"github.com/strata-rtc/strata/internal/rig"
)

// startServer writes strata's configuration, starts the network controller when the scenario
// asks for it, then strata, and creates the sessions' room with the scenario's layer policy.
func (s *Sessions) startServer(ctx context.Context) error {
	env := s.env
	if s.dir == "" {
		d, err := os.MkdirTemp("", "strata-sfuflow-")
		if err != nil {
			return err
		}
		s.dir, s.tmpDir = d, true
	} else if err := os.MkdirAll(s.dir, 0o755); err != nil {
		return err
	}
	// Local traffic inside the namespace (strata to its controller) goes over lo.
	if out, err := env.SFUHost.Command(ctx, "ip", "link", "set", "lo", "up").CombinedOutput(); err != nil {
		return fmt.Errorf("sfuflow: lo up in %s: %v: %s", env.SFUHost.Name(), err, out)
	}
	addr := env.SFUHost.Addr()
	httpc := hostHTTP(env.SFUHost)
	netctlURL := ""
	if env.SFU.NetCtl {
		topo := filepath.Join(s.dir, "netctl-topology.yaml")
		if err := os.WriteFile(topo, []byte(netctlTopology(env)), 0o644); err != nil {
			return err
		}
		listen := netip.AddrPortFrom(addr, netctlPort).String()
		args := []string{"netctl", "serve", "-topology", topo, "-listen", listen}
		for _, sw := range env.Switches {
			args = append(args, "-switch", sw.Node+"="+sw.Target)
		}
		if env.SFU.Reserve > 0 {
			// The reservation's meters need a switch on the SFU's link to enforce them (-switch).
			args = append(args, "-reserve", strconv.FormatFloat(env.SFU.Reserve, 'g', -1, 64))
		}
		p, err := startProcess(env.SFUHost, s.dir, "netctl", env.Binary, args...)
		if err != nil {
			return err
		}
		s.procs = append(s.procs, p)
		netctlURL = "http://" + listen
		s.netctl = netctlURL
		if err := p.WaitHTTP(ctx, httpc, netctlURL+"/v1/health"); err != nil {
			return err
		}
	}
	cfg, err := rig.WriteStrataConfig(s.dir, addr.String(), "", apiPort, s.strataYAML(netctlURL))
	if err != nil {
		return err
	}
	p, err := startProcess(env.SFUHost, s.dir, "strata", env.Binary, "serve", "-config", cfg)
	if err != nil {
		return err
	}
	s.procs = append(s.procs, p)
	s.server = apiURL(addr)
	if err := p.WaitHTTP(ctx, httpc, s.server+"/info"); err != nil {
		return err
	}
	return s.createRoom(ctx)
}

// strataYAML is what the scenario sets over the generated configuration: the layer policy, and
// the network controller with each subscriber's receiver node (its handle's opaque_id starts
// with the node's name).
func (s *Sessions) strataYAML(netctlURL string) string {
	u := s.env.SFU
	var b strings.Builder
	fmt.Fprintf(&b, "plugins:\n  videoroom:\n    allocation:\n      policy: %s\n", u.Policy)
	if netctlURL != "" {
		fmt.Fprintf(&b, "    netctl:\n      url: %q\n      node: %q\n", netctlURL, u.Node)
		if s.switchAtSFU() {
			// The switch thins: strata forwards every layer, marked (seed 000's split).
			m := s.env.layerMarks()
			fmt.Fprintf(&b, "      enforcement: switch\n      marks: {layers: [%d, %d, %d]}\n", m[0], m[1], m[2])
		}
		fmt.Fprintf(&b, "      receivers:\n")
		seen := map[string]bool{}
		for _, ss := range u.Sessions {
			if n := receiverNode(ss); !seen[n] {
				seen[n] = true
				fmt.Fprintf(&b, "        %q: %q\n", n+"-", n)
			}
		}
	}
	return b.String()
}

// switchAtSFU reports whether a switch sits on the SFU's node, where it can enforce the
// controller's decisions on the SFU's traffic.
func (s *Sessions) switchAtSFU() bool {
	_, ok := s.sfuSwitch()
	return ok
}

// sfuSwitch is the switch on the SFU's node, if any.
func (s *Sessions) sfuSwitch() (Switch, bool) {
	for _, sw := range s.env.Switches {
		if sw.Node == s.env.SFU.Node {
			return sw, true
		}
	}
	return Switch{}, false
}

// netctlTopology is the controller's topology: the scenario's nodes and links at their initial
// rates, the SFU's node the enforcer (and every node with a switch, which can enforce too).
func netctlTopology(env Env) string {
	var b strings.Builder
	fmt.Fprintf(&b, "name: emu\nnodes:\n")
	seen := map[string]bool{}
	switched, iface := map[string]bool{}, map[string]string{}
	for _, sw := range env.Switches {
		switched[sw.Node] = true
		for i, l := range sw.Links {
			if i < len(sw.Ports) {
				iface[l] = sw.Ports[i]
			}
		}
	}
	for _, l := range env.Links {
		for _, n := range []string{l.From, l.To} {
			if seen[n] {
				continue
			}
			seen[n] = true
			switch {
			case n == env.SFU.Node:
				fmt.Fprintf(&b, "  - {name: %q, role: sfu, enforcer: true}\n", n)
			case switched[n]:
				fmt.Fprintf(&b, "  - {name: %q, enforcer: true}\n", n)
			default:
				fmt.Fprintf(&b, "  - {name: %q}\n", n)
			}
		}
	}
	fmt.Fprintf(&b, "links:\n")
	for _, l := range env.Links {
		extra := ""
		if p := iface[l.Name]; p != "" {
			extra = fmt.Sprintf(", interface: %q", p)
		}
		fmt.Fprintf(&b, "  - {name: %q, from: %q, to: %q, capacity: %.0fbps, delay: %s%s}\n",
			l.Name, l.From, l.To, l.Rate.At(0), l.Delay, extra)
	}
	return b.String()
}

// createRoom creates the sessions' room from the SFU's own host: VP8 and Opus, no bitrate cap
// (the clips are pre-encoded), the scenario's layer policy.
func (s *Sessions) createRoom(ctx context.Context) error {
	c, err := janusclient.Dial(ctx, s.server, janusclient.WithHTTPClient(hostHTTP(s.env.SFUHost)))
	if err != nil {
		return err
	}
	defer c.Close()
	sess, err := c.Create(ctx)
	if err != nil {
		return err
	}
	defer func() { _ = sess.Destroy(context.Background()) }()
	h, err := sess.Attach(ctx, client.Plugin)
	if err != nil {
		return err
	}
	_, err = h.Message(ctx, map[string]any{"request": "create", "room": s.room, "publishers": max(len(s.runs), 1),
		"bitrate": 0, "fir_freq": 0, "videocodec": "vp8", "audiocodec": "opus", "permanent": false,
		"layer_policy": s.env.SFU.Policy}, nil)
	if err != nil {
		return fmt.Errorf("sfuflow: create room: %w", err)
	}
	return nil
}

// meterInterval is how often the controller hears the links' loads (the simulator's default).
const meterInterval = 500 * time.Millisecond

// feedLoads sends the controller each link's measured load every meterInterval.
func (s *Sessions) feedLoads(ctx context.Context) {
	defer s.wg.Done()
	httpc := hostHTTP(s.env.SFUHost)
	t := time.NewTicker(meterInterval)
	defer t.Stop()
	warned := false
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		for _, l := range s.env.Links {
			bps, ok := s.env.LinkLoad(l.Name)
			if !ok {
				continue
			}
			if err := putLoad(ctx, httpc, s.netctl+"/v1/links/"+url.PathEscape(l.Name), int64(bps)); err != nil && !warned && ctx.Err() == nil {
				warned = true // once: the controller's own log says more
				fmt.Fprintf(s.env.Log, "sfuflow: netctl load report: %v\n", err)
			}
		}
	}
}

func putLoad(ctx context.Context, c *http.Client, u string, bps int64) error {
	body, _ := json.Marshal(map[string]int64{"load_bps": bps})
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, u, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("PUT %s: HTTP %d", u, resp.StatusCode)
	}
	return nil
}

// netctlState are the controller's endpoints whose state Stop keeps (netctl-<name>.json) when the
// run has a directory of its own: what it decided, what the switches hold (their flows and meters with counters).
var netctlState = []string{"decisions", "switches", "subscriptions", "links"}

// saveNetctlState keeps the controller's state as the run ends, when the run has a directory of
// its own: every state endpoint, so that a run can be checked afterwards (were the decisions
// enforced, what did the switch drop, what did the meters police).
func (s *Sessions) saveNetctlState() error {
	if s.netctl == "" || s.tmpDir {
		return nil
	}
	var errs []error
	httpc := s.stateClient()
	for _, name := range netctlState {
		body, err := getBody(httpc, s.netctl+"/v1/"+name)
		if err == nil {
			err = os.WriteFile(filepath.Join(s.dir, "netctl-"+name+".json"), body, 0o644)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("sfuflow: the controller's %s: %w", name, err))
		}
	}
	return errors.Join(errs...)
}

func (s *Sessions) stateClient() *http.Client {
	c := hostHTTP(s.env.SFUHost)
	c.Timeout = 5 * time.Second
	return c
}

func getBody(c *http.Client, u string) ([]byte, error) {
	resp, err := c.Get(u)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("HTTP %d: %s", resp.StatusCode, bytes.TrimSpace(body))
	}
	return body, err
}

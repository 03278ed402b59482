package ovs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// Client programs one OpenFlow switch with ovs-ofctl (OpenFlow 1.4, for atomic bundles). Every
// call runs one ovs-ofctl process, bounded by Timeout and the context; a Client is safe for
// concurrent use.
type Client struct {
	// Target is what ovs-ofctl connects to, e.g. "unix:/run/sw/br0.mgmt".
	Target string
	// Timeout bounds each call (default 5 s).
	Timeout time.Duration
	// Unixctl is ovs-vswitchd's control socket (optional): with it, WaitRevalidated can tell when
	// a new flow table has reached the datapath's caches.
	Unixctl string
}

// NewClient returns a client of target with the default timeout.
func NewClient(target string) *Client { return &Client{Target: target, Timeout: 5 * time.Second} }

// Error is a failed ovs-ofctl call, with what ovs-ofctl said on stderr.
type Error struct {
	Op     string // the ovs-ofctl command, e.g. "add-flows"
	Target string
	Stderr string
	// Refused is true when the switch answered with an OpenFlow error (it is reachable but
	// rejected the request: a full table, an unknown meter, a bad match); false when it could not
	// be reached or the call failed before.
	Refused bool
	Err     error
}

func (e *Error) Error() string {
	msg := e.Stderr
	if msg == "" {
		msg = e.Err.Error()
	}
	return fmt.Sprintf("ovs-ofctl %s %s: %s", e.Op, e.Target, msg)
}

func (e *Error) Unwrap() error { return e.Err }

// IsRefused reports whether err is a switch's OpenFlow error (see Error.Refused).
func IsRefused(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Refused
}

// run calls ovs-ofctl with protocol proto ("OpenFlow14", or "OpenFlow13" for meters).
func (c *Client) run(ctx context.Context, proto, stdin, op string, args ...string) (string, error) {
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = 5 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	secs := max(1, int((timeout+time.Second-1)/time.Second))
	argv := append([]string{"-O", proto, "--timeout=" + strconv.Itoa(secs)}, args...)
	cmd := exec.CommandContext(ctx, "ovs-ofctl", argv...)
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		stderr := strings.TrimSpace(errb.String())
		if ctx.Err() != nil {
			err = fmt.Errorf("%w (%v)", ctx.Err(), err)
		}
		return "", &Error{Op: op, Target: c.Target, Stderr: stderr, Refused: refused(stderr), Err: err}
	}
	return out.String(), nil
}

// refused tells an OpenFlow error reply (the switch's "no") from a connection failure.
func refused(stderr string) bool {
	return strings.Contains(stderr, "Error OFP") || strings.Contains(stderr, "OFPT_ERROR")
}

// AddFlow adds one flow (ovs-ofctl's syntax, e.g. "priority=0,actions=NORMAL").
func (c *Client) AddFlow(ctx context.Context, flow string) error {
	if err := checkSpec(flow); err != nil {
		return err
	}
	_, err := c.run(ctx, "OpenFlow14", "", "add-flow", "add-flow", c.Target, flow)
	return c.changed(ctx, err)
}

// changed finishes a flow table change: with Unixctl set, it returns once the datapath has it.
func (c *Client) changed(ctx context.Context, err error) error {
	if err != nil {
		return err
	}
	return c.WaitRevalidated(ctx)
}

// ReplaceFlows makes flows the switch's whole flow table, atomically (one bundle: packets see the
// old table or the new one, never a mix); flows already there with the same match keep their
// counters. Like every flow change, it returns once the datapath has the new table when Unixctl
// is set (WaitRevalidated).
func (c *Client) ReplaceFlows(ctx context.Context, flows []string) error {
	in, err := lines("", flows)
	if err != nil {
		return err
	}
	_, err = c.run(ctx, "OpenFlow14", in, "replace-flows", "--bundle", "replace-flows", c.Target, "-")
	return c.changed(ctx, err)
}

// ReplaceCookie replaces the flows whose cookie matches cookie under mask with flows (which should
// carry such cookies), atomically in one bundle, leaving every other flow alone: how a controller
// owns its share of a table that others (a meter policy, the base NORMAL flow) also use.
func (c *Client) ReplaceCookie(ctx context.Context, cookie, mask uint64, flows []string) error {
	body, err := lines("add ", flows)
	if err != nil {
		return err
	}
	in := fmt.Sprintf("delete cookie=%#x/%#x\n", cookie, mask) + body
	_, err = c.run(ctx, "OpenFlow14", in, "add-flows", "--bundle", "add-flows", c.Target, "-")
	return c.changed(ctx, err)
}

// DumpFlows returns every flow of the switch with its counters.
func (c *Client) DumpFlows(ctx context.Context) ([]Flow, error) {
	out, err := c.run(ctx, "OpenFlow14", "", "dump-flows", "--no-names", "dump-flows", c.Target)
	if err != nil {
		return nil, err
	}
	flows, err := ParseFlows(out)
	if err != nil {
		return nil, &Error{Op: "dump-flows", Target: c.Target, Err: err}
	}
	return flows, nil
}

// WaitRevalidated waits until the datapath's flow caches reflect the flow table (ovs-appctl
// revalidator/wait): a flow change takes effect in the datapath a little after ovs-ofctl returns,
// and packets of a cached flow still see the old actions until then. Without Unixctl it returns
// at once.
func (c *Client) WaitRevalidated(ctx context.Context) error {
	if c.Unixctl == "" {
		return nil
	}
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = 5 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var errb bytes.Buffer
	cmd := exec.CommandContext(ctx, "ovs-appctl", "-t", c.Unixctl, "revalidator/wait")
	cmd.Stderr = &errb
	if err := cmd.Run(); err != nil {
		return &Error{Op: "revalidator/wait", Target: c.Unixctl, Stderr: strings.TrimSpace(errb.String()), Err: err}
	}
	return nil
}

// lines joins flow specs one per line, each after prefix; a spec with a line break would smuggle
// in a second command, so it is refused.
func lines(prefix string, flows []string) (string, error) {
	var b strings.Builder
	for _, f := range flows {
		if err := checkSpec(f); err != nil {
			return "", err
		}
		b.WriteString(prefix)
		b.WriteString(f)
		b.WriteByte('\n')
	}
	return b.String(), nil
}

func checkSpec(f string) error {
	if strings.TrimSpace(f) == "" || strings.ContainsAny(f, "\n\r\x00") {
		return fmt.Errorf("ovs: bad flow specification %q", f)
	}
	return nil
}

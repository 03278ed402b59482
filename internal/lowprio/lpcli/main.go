package lpcli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path"
	"time"

	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/internal/janusclient"
	"github.com/strata-rtc/strata/internal/lowprio/dc"
)

// Exit codes.
const (
	ExitOK       = 0
	ExitFailed   = 1
	ExitUsage    = 2
	closeTimeout = 5 * time.Second
)

const usage = `usage: strata lowprio get [flags] NAME [FILE]
       strata lowprio put [flags] SOURCE [NAME]

Moves a file at low priority (LEDBAT over a data channel) to or from a strata server, on a
PeerConnection to its echotest plugin through the Janus API (docs/LOWPRIO.md).

  get NAME [FILE]   download NAME (a file under the server's lowprio.dir, or gen:<bytes>) into FILE
                    (default: NAME's base name; "-": standard output; gen:<bytes> without FILE:
                    every byte checked against the generated stream, nothing written)
  put SOURCE [NAME] upload SOURCE (a file, or gen:<bytes> for the generated stream) as NAME
                    (default: SOURCE's base name, or gen:<bytes>, which the server checks)

flags:
`

// request is one parsed command line.
type request struct {
	verb, name, file string
	server           string
	opts             dc.Options
	timeout          time.Duration
	quiet            bool
	janus            []janusclient.Option
}

// Main runs `strata lowprio` with args (after "lowprio").
func Main(args []string, stdout, stderr io.Writer) int {
	req, code := parse(args, stderr)
	if code >= 0 {
		return code
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if req.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, req.timeout)
		defer cancel()
	}
	st, err := run(ctx, req, stdout, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "strata lowprio %s: %v\n", req.verb, err)
		return ExitFailed
	}
	if !req.quiet {
		fmt.Fprintf(stderr, "%s %s: %d bytes in %v (%.2f Mbit/s), %d retransmissions\n", req.verb, req.name, st.Bytes,
			st.Elapsed.Round(time.Millisecond), float64(st.Bytes)*8/st.Elapsed.Seconds()/1e6, st.Retransmits)
	}
	return ExitOK
}

// parse reads the flags and arguments; code is -1 when the command should run.
func parse(args []string, stderr io.Writer) (req request, code int) {
	if len(args) == 0 || (args[0] != dc.VerbGet && args[0] != dc.VerbPut) {
		fmt.Fprint(stderr, usage)
		return req, ExitUsage
	}
	req.verb = args[0]
	fs := flag.NewFlagSet("strata lowprio "+req.verb, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, usage); fs.PrintDefaults() }
	fs.StringVar(&req.server, "server", "http://127.0.0.1:8088/janus", "the server's Janus API (http(s):// or ws(s)://)")
	fs.StringVar(&req.opts.Variant, "variant", dc.VariantLEDBAT, "the sending side's controller when uploading: ledbat or ledbat++")
	fs.DurationVar(&req.opts.Target, "target", 0, "the controller's target queuing delay when uploading (0: the variant's, 100 or 60 ms)")
	fs.DurationVar(&req.timeout, "timeout", 0, "give up after this long (0: never)")
	fs.BoolVar(&req.quiet, "quiet", false, "no progress on standard error")
	secret := fs.String("api-secret", "", "the server's api_secret, if it has one")
	token := fs.String("token", "", "a stored token, if the server requires one")
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return req, ExitOK
		}
		return req, ExitUsage
	}
	if err := req.positional(fs.Args()); err != nil {
		fmt.Fprintf(stderr, "strata lowprio %s: %v\n", req.verb, err)
		return req, ExitUsage
	}
	if err := dc.CheckVariant(req.opts.Variant); err != nil {
		fmt.Fprintf(stderr, "strata lowprio %s: %v\n", req.verb, err)
		return req, ExitUsage
	}
	if *secret != "" {
		req.janus = append(req.janus, janusclient.WithAPISecret(*secret))
	}
	if *token != "" {
		req.janus = append(req.janus, janusclient.WithToken(*token))
	}
	return req, -1
}

// positional reads NAME [FILE] (get) or SOURCE [NAME] (put).
func (r *request) positional(args []string) error {
	if len(args) < 1 || len(args) > 2 {
		return errors.New("want one or two arguments (see -h)")
	}
	first, second := args[0], ""
	if len(args) == 2 {
		second = args[1]
	}
	if r.verb == dc.VerbGet {
		r.name, r.file = first, second
		if r.file == "" && !isGenerated(r.name) {
			r.file = path.Base(r.name)
		}
	} else {
		r.file, r.name = first, second
		if r.name == "" {
			r.name = path.Base(r.file)
			if isGenerated(r.file) {
				r.name = r.file
			}
		}
	}
	if err := dc.CheckName(r.name); err != nil {
		return err
	}
	if _, _, err := dc.ParseGenerated(r.file); err != nil {
		return err
	}
	return nil
}

func isGenerated(s string) bool {
	_, gen, _ := dc.ParseGenerated(s)
	return gen
}

// run connects, opens the channel and moves the stream.
func run(ctx context.Context, req request, stdout, stderr io.Writer) (dc.Stats, error) {
	if !req.quiet {
		req.opts.Progress = progressPrinter(stderr)
		req.opts.ProgressInterval = time.Second
	}
	// The channel is attached as soon as it exists: the server may send before Connect returns.
	var t *dc.Transfer
	conn, err := Connect(ctx, req.server, func(pc *webrtc.PeerConnection) error {
		ch, err := dc.Open(pc, req.verb, req.name)
		if err == nil {
			t = dc.Attach(ch, req.opts)
		}
		return err
	}, req.janus...)
	if err != nil {
		return dc.Stats{}, err
	}
	defer conn.Close()
	if req.verb == dc.VerbPut {
		return put(ctx, t, req)
	}
	return get(ctx, t, req, stdout)
}

func put(ctx context.Context, t *dc.Transfer, req request) (dc.Stats, error) {
	if n, gen, _ := dc.ParseGenerated(req.file); gen {
		return t.Send(ctx, dc.Generated(n))
	}
	f, err := os.Open(req.file)
	if err != nil {
		t.Close()
		return dc.Stats{}, err
	}
	defer f.Close()
	return t.Send(ctx, f)
}

func get(ctx context.Context, t *dc.Transfer, req request, stdout io.Writer) (dc.Stats, error) {
	switch n, gen, _ := dc.ParseGenerated(req.name); {
	case req.file == "-":
		return t.Receive(ctx, stdout)
	case gen && req.file == "":
		v := &dc.Verifier{N: n}
		st, err := t.Receive(ctx, v)
		if err == nil {
			err = v.Check()
		}
		return st, err
	}
	f, err := os.Create(req.file)
	if err != nil {
		t.Close()
		return dc.Stats{}, err
	}
	st, err := t.Receive(ctx, f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return st, err
}

// progressPrinter prints one line per report: bytes, rate and, when sending, the sender's view.
func progressPrinter(w io.Writer) func(dc.Progress) {
	return func(p dc.Progress) {
		fmt.Fprintf(w, "%6.1f s %12d bytes %10v", p.Elapsed.Seconds(), p.Bytes, p.Rate)
		if p.RTT > 0 {
			fmt.Fprintf(w, "  RTT %v  queuing delay %v  cwnd %d", p.RTT.Round(time.Millisecond), p.QueueDelay.Round(time.Millisecond), p.Cwnd)
		}
		fmt.Fprintln(w)
	}
}

package lpcli

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/internal/janusclient/janustest"
	"github.com/strata-rtc/strata/internal/lowprio/dc"
)

func TestParse(t *testing.T) {
	for _, c := range []struct {
		args             string
		verb, name, file string
		code             int
	}{
		{"get video/a.webm", "get", "video/a.webm", "a.webm", -1},
		{"get video/a.webm out.webm", "get", "video/a.webm", "out.webm", -1},
		{"get gen:1000", "get", "gen:1000", "", -1},
		{"get gen:1000 -", "get", "gen:1000", "-", -1},
		{"put /tmp/x.bin", "put", "x.bin", "/tmp/x.bin", -1},
		{"put /tmp/x.bin y/z.bin", "put", "y/z.bin", "/tmp/x.bin", -1},
		{"put gen:5000", "put", "gen:5000", "gen:5000", -1},
		{"put -variant ledbat++ -target 50ms gen:5000", "put", "gen:5000", "gen:5000", -1},
		{"", "", "", "", ExitUsage},
		{"fetch x", "", "", "", ExitUsage},
		{"get", "get", "", "", ExitUsage},
		{"get /etc/passwd", "get", "/etc/passwd", "", ExitUsage},
		{"get a/../../b", "get", "", "", ExitUsage},
		{"put gen:x", "put", "", "", ExitUsage},
		{"put -variant cubic gen:10", "put", "gen:10", "gen:10", ExitUsage},
		{"get a b c", "get", "", "", ExitUsage},
		{"get -h", "get", "", "", ExitOK},
	} {
		req, code := parse(strings.Fields(c.args), io.Discard)
		if code != c.code || (code == -1 && (req.verb != c.verb || req.name != c.name || req.file != c.file)) {
			t.Errorf("%q: verb %q name %q file %q code %d; want %q %q %q %d", c.args, req.verb, req.name, req.file, code,
				c.verb, c.name, c.file, c.code)
		}
	}
}

// Connect reaches a real strata's echotest with a data-only offer, and the low-priority channel
// it carries opens.
func TestConnectOpensTheChannel(t *testing.T) {
	srv, _ := janustest.Start(t, nil, janustest.Logger())
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var ch *webrtc.DataChannel
	conn, err := Connect(ctx, "http://"+srv.HTTPAddr()+"/janus", func(pc *webrtc.PeerConnection) (err error) {
		ch, err = dc.Open(pc, dc.VerbGet, "gen:10")
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	opened := make(chan struct{})
	ch.OnOpen(func() { close(opened) })
	select {
	case <-opened:
	case <-ctx.Done():
		t.Fatal("the channel did not open")
	}
	if ch.Label() != "lowprio:get:gen:10" || ch.Ordered() || *ch.MaxRetransmits() != dc.MaxRetransmits || ch.Protocol() != dc.Protocol {
		t.Errorf("channel %q ordered %v maxRetransmits %d protocol %q", ch.Label(), ch.Ordered(), *ch.MaxRetransmits(), ch.Protocol())
	}
}

// A server that is not there is a clear error, not a hang.
func TestConnectToNothing(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	code := Main([]string{"get", "-quiet", "-server", "http://127.0.0.1:1/janus", "gen:10"}, io.Discard, io.Discard)
	if code != ExitFailed || ctx.Err() != nil {
		t.Fatalf("exit code %d", code)
	}
}

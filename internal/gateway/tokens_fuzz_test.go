package gateway

import (
	"bytes"
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/config"
	"github.com/strata-rtc/strata/internal/gateway/gatewaytest"
	"github.com/strata-rtc/strata/internal/plugin"
)

// FuzzAdminTokensAndPcap throws arbitrary admin requests at a gateway with token_auth on, so that
// the token verbs' and start_pcap's parameter parsing is reached; every input gets one Janus
// envelope and nothing panics. A live handle (HANDLE) is kept for start_pcap and stop_pcap.
func FuzzAdminTokensAndPcap(f *testing.F) {
	for _, s := range []string{
		`{"janus":"add_token","transaction":"t","token":"k","plugins":["janus.plugin.testecho",1],"admin_secret":"s"}`,
		`{"janus":"allow_token","transaction":"t","token":"k","plugins":["janus.plugin.failing"],"admin_secret":"s"}`,
		`{"janus":"disallow_token","transaction":"t","token":"k","plugins":["janus.plugin.testecho"],"admin_secret":"s"}`,
		`{"janus":"list_tokens","transaction":"t","admin_secret":"s"}`,
		`{"janus":"remove_token","transaction":"t","token":"k","admin_secret":"s"}`,
		`{"janus":"start_pcap","transaction":"p","session_id":SESSION,"handle_id":HANDLE,"folder":"f","filename":"x.pcap","truncate":10,"admin_secret":"s"}`,
		`{"janus":"start_pcap","transaction":"p","session_id":SESSION,"handle_id":HANDLE,"folder":"../..","admin_secret":"s"}`,
		`{"janus":"stop_pcap","transaction":"p","session_id":SESSION,"handle_id":HANDLE,"admin_secret":"s"}`,
	} {
		f.Add([]byte(s))
	}
	cfg := config.Default()
	cfg.Transports.Admin.AdminSecret = "s"
	cfg.Transports.Admin.PcapDir = f.TempDir()
	cfg.General.TokenAuth, cfg.General.Tokens = true, []string{"fuzz"}
	cfg.General.SessionTimeout = 0
	g := New(cfg, nil, []plugin.Plugin{gatewaytest.NewEcho(), gatewaytest.Failing{}}, quietLogger(), nil)
	defer g.Close()
	sink := gatewaytest.NewSink()
	var sid, hid uint64
	f.Fuzz(func(t *testing.T, data []byte) {
		if !g.HasSession(sid) {
			sid = mustDataID(g.Handle(context.Background(), []byte(`{"janus":"create","transaction":"c","token":"fuzz"}`), Origin{Sink: sink}))
			hid = 0
		}
		if hid == 0 || g.handle(hid) == nil {
			req := `{"janus":"attach","transaction":"a","plugin":"janus.plugin.testecho","token":"fuzz","session_id":` + strconv.FormatUint(sid, 10) + `}`
			hid = mustDataID(g.Handle(context.Background(), []byte(req), Origin{Sink: sink}))
		}
		data = bytes.ReplaceAll(data, []byte("SESSION"), []byte(strconv.FormatUint(sid, 10)))
		data = bytes.ReplaceAll(data, []byte("HANDLE"), []byte(strconv.FormatUint(hid, 10)))
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		checkEnvelope(t, g.Admin(ctx, data, Origin{}), data)
	})
}

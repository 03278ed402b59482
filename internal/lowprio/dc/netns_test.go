// The link test measures the queue a transfer builds in real time, through the user-space link
// emulator running in the test's process: under the race detector it would measure the detector.
// The other tests of this package run under -race.

//go:build !race

package dc

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/pion/ice/v4"
	"github.com/pion/logging"
	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/internal/emu/emutest"
	"github.com/strata-rtc/strata/internal/emu/endpoint"
	"github.com/strata-rtc/strata/internal/emu/topo/topotest"
	"github.com/strata-rtc/strata/internal/lowprio"
)

// linkRate and linkDelay are the emulated path of the namespace test: 2 Mbit/s, 20 ms each way,
// a 150-packet drop-tail buffer (about 900 ms, far above either target, so only the controller
// keeps the queue short).
const (
	linkRate  = 2e6
	linkDelay = 20 * time.Millisecond
)

// A transfer through a rate-limited link between two network namespaces (the emulator's TUN
// links) completes with every byte checked, fills the link when alone, and keeps the queuing
// delay the link measured near the variant's target.
func TestTransferThroughNamespaceLink(t *testing.T) {
	// LEDBAT++'s slowdowns hold the window at its minimum for two RTTs and more in every ten or so,
	// and its slow start ends at ¾ of the target: it leaves more of the link unused (79 to 90% in
	// runs of this test).
	for _, c := range []struct {
		variant string
		target  time.Duration
		minUse  float64
	}{{VariantLEDBAT, 100 * time.Millisecond, 0.9}, {VariantLEDBATPlus, 60 * time.Millisecond, 0.7}} {
		t.Run(c.variant, func(t *testing.T) { namespaceTransfer(t, c.variant, c.target, c.minUse) })
	}
}

func namespaceTransfer(t *testing.T, variant string, target time.Duration, minUse float64) {
	emutest.NeedRoot(t)
	net := topotest.Pair(t, linkRate, linkDelay, 150, "ledbat", time.Minute)
	net.Start(time.Now())
	src, dst := newNSPeer(t, net.Host("src")), newNSPeer(t, net.Host("dst"))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	accepted := make(chan *webrtc.DataChannel, 4)
	src.OnDataChannel(func(ch *webrtc.DataChannel) { accepted <- ch })
	if _, err := dst.CreateDataChannel("signal", nil); err != nil {
		t.Fatal(err)
	}
	if err := signalCtx(ctx, dst, src); err != nil {
		t.Fatal(err)
	}
	<-accepted

	const n = 2_500_000 // 10 s at 2 Mbit/s
	served := make(chan error, 1)
	go func() {
		ch := <-accepted
		_, name, err := ParseLabel(ch.Label())
		if err == nil {
			var size int64
			size, _, err = ParseGenerated(name)
			if err == nil {
				_, err = Send(ctx, ch, Generated(size), Options{Variant: variant, ProgressInterval: 2 * time.Second,
					Progress: func(p Progress) {
						t.Logf("%5.1f s: %7d bytes, %v, RTT %v, queuing delay %v, cwnd %d", p.Elapsed.Seconds(), p.Bytes, p.Rate,
							p.RTT.Round(time.Millisecond), p.QueueDelay.Round(time.Millisecond), p.Cwnd)
					}})
			}
		}
		served <- err
	}()
	v := &Verifier{N: n}
	st, err := Get(ctx, dst, fmt.Sprintf("gen:%d", n), v, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := <-served; err != nil {
		t.Fatal("sender:", err)
	}
	if err := v.Check(); err != nil {
		t.Fatal(err)
	}
	fs := net.FlowStats("f")
	if fs == nil {
		t.Fatal("no flow statistics")
	}
	goodput := float64(n) * 8 / st.Elapsed.Seconds()
	m := emutest.MeasureLEDBATAlone(fs, linkRate, st.Elapsed)
	link, med, p95 := m.Use, m.Median, m.P95
	t.Logf("%s: %d bytes in %v: goodput %.2f Mbit/s, link use after 3 s %.0f%%, queuing delay median %v p95 %v (target %v), %d dropped, %d retransmissions",
		variant, n, st.Elapsed.Round(time.Millisecond), goodput/1e6, 100*link, med, p95, target, fs.Dropped, st.Retransmits)
	messages := n/(lowprio.DefaultConfig().MaxMessage-lowprio.DataHeader) + 1
	for _, f := range m.Claims(target, minUse) {
		t.Error(f)
	}
	// Beside the DATA messages, the sender's side of the link carries SCTP's SACKs of the ACK
	// messages (one per two): no more (pion/sctp's FORWARD-TSN ping-pong would, see MaxRetransmits).
	t.Logf("%d packets on the link for %d DATA messages", fs.SentPackets, messages)
	if fs.SentPackets > int64(messages)*3/2 {
		t.Errorf("%d packets on the link for %d DATA messages", fs.SentPackets, messages)
	}
}

// newNSPeer is a data-only PeerConnection whose one ICE candidate is a UDP socket opened in the
// host's namespace.
func newNSPeer(t *testing.T, h endpoint.Host) *webrtc.PeerConnection {
	t.Helper()
	quiet := logging.NewDefaultLoggerFactory()
	quiet.DefaultLogLevel = logging.LogLevelDisabled
	addr := h.Addr()
	var conn net.PacketConn
	if err := h.Do(func() (err error) {
		conn, err = net.ListenUDP("udp4", net.UDPAddrFromAddrPort(netip.AddrPortFrom(addr, 0)))
		return err
	}); err != nil {
		t.Fatal(err)
	}
	mux := webrtc.NewICEUDPMux(quiet.NewLogger("ice"), conn)
	var se webrtc.SettingEngine
	se.LoggerFactory = quiet
	se.SetICEUDPMux(mux)
	se.SetNetworkTypes([]webrtc.NetworkType{webrtc.NetworkTypeUDP4})
	se.SetICEMulticastDNSMode(ice.MulticastDNSModeDisabled)
	se.SetIPFilter(func(ip net.IP) bool { a, ok := netip.AddrFromSlice(ip); return ok && a.Unmap() == addr })
	pc, err := webrtc.NewAPI(webrtc.WithSettingEngine(se)).NewPeerConnection(webrtc.Configuration{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pc.Close(); _ = mux.Close() })
	return pc
}

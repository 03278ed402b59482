package topo

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/sim"
)

func TestSmoke(t *testing.T) {
	spec := Spec{
		Links: []sim.LinkConfig{
			{Name: "ab", From: "a", To: "b", Rate: sim.ConstantRate(10e6), Delay: 20 * time.Millisecond},
			{Name: "ba", From: "b", To: "a", Rate: sim.ConstantRate(10e6), Delay: 20 * time.Millisecond},
		},
		Hosts:    []HostSpec{{"ha", "a"}, {"hb", "b"}},
		Flows:    []FlowSpec{{Name: "f", Src: "ha", Dst: "hb", Path: []string{"a", "b"}}},
		Duration: 5 * time.Second,
	}
	n, err := Build(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	n.Start(time.Now())
	var srv net.PacketConn
	if err := n.Host("hb").Do(func() (err error) { srv, err = net.ListenPacket("udp4", ":9000"); return }); err != nil {
		t.Fatal(err)
	}
	var cl net.PacketConn
	if err := n.Host("ha").Do(func() (err error) { cl, err = net.ListenPacket("udp4", ":0"); return }); err != nil {
		t.Fatal(err)
	}
	dst := &net.UDPAddr{IP: n.Host("hb").Addr().AsSlice(), Port: 9000}
	t0 := time.Now()
	cl.WriteTo([]byte("hello"), dst)
	buf := make([]byte, 2000)
	srv.SetReadDeadline(time.Now().Add(2 * time.Second))
	_, from, err := srv.ReadFrom(buf)
	if err != nil {
		t.Fatal(err, n.Counters())
	}
	t.Log("one way", time.Since(t0))
	t0 = time.Now()
	srv.WriteTo([]byte("back"), from)
	cl.SetReadDeadline(time.Now().Add(2 * time.Second))
	if _, _, err := cl.ReadFrom(buf); err != nil {
		t.Fatal(err)
	}
	t.Log("back", time.Since(t0))
	t.Logf("%+v %+v", n.Counters(), *n.FlowStats("f"))
}

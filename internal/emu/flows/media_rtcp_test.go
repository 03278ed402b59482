package flows

import (
	"testing"

	"github.com/pion/rtcp"

	"github.com/strata-rtc/strata/internal/rtcpview"
	"github.com/strata-rtc/strata/internal/sim"
)

func firstPacket(_ testing.TB, b []byte) (rtcpview.Packet, bool) {
	it := rtcpview.Iterate(b)
	return it.Next()
}

func TestReportRoundTrip(t *testing.T) {
	for _, r := range []sim.RxReport{
		{Signal: 0.0123, Recv: 812345, Mode: 1},
		{Rate: 640000, Signal: 0.5, Recv: 1, Mode: 0},
		{},
	} {
		b, err := reportPacket(r, 0x1234).Marshal()
		if err != nil {
			t.Fatal(err)
		}
		p, ok := firstPacket(t, b)
		if !ok {
			t.Fatal("no packet")
		}
		got, isReport, err := parseReport(p)
		if !isReport || err != nil {
			t.Fatalf("%+v: parsed as report %v, error %v", r, isReport, err)
		}
		if got.Rate != r.Rate || got.Recv != r.Recv || got.Mode != r.Mode || int64(got.Signal*1e9) != int64(r.Signal*1e9) {
			t.Errorf("round trip of %+v gave %+v", r, got)
		}
	}
	// A rate alone is a standard REMB.
	b, _ := reportPacket(sim.RxReport{Rate: 500000}, 7).Marshal()
	p, _ := firstPacket(t, b)
	remb, err := rtcpview.ParseREMB(p)
	if err != nil || remb.Bitrate() < 499000 || remb.Bitrate() > 501000 {
		t.Errorf("REMB %v, %v", remb.Bitrate(), err)
	}
}

func TestReportRejectsMalformed(t *testing.T) {
	good, _ := reportPacket(sim.RxReport{Signal: 0.01, Recv: 1000}, 9).Marshal()
	other, _ := (&rtcp.ApplicationDefined{SSRC: 1, Name: "ABCD", Data: make([]byte, 8)}).Marshal()
	short, _ := (&rtcp.ApplicationDefined{SSRC: 1, Name: reportName, Data: make([]byte, 8)}).Marshal()
	huge := append([]byte(nil), good...)
	huge[12] = 0xff // the rate's top byte: far beyond any link
	p, _ := firstPacket(t, other)
	if _, ok, _ := parseReport(p); ok {
		t.Error("an APP packet of another name was taken for a report")
	}
	for name, b := range map[string][]byte{"short": short, "huge": huge} {
		p, _ := firstPacket(t, b)
		if _, ok, err := parseReport(p); !ok || err == nil {
			t.Errorf("%s: ok %v err %v, want an error", name, ok, err)
		}
	}
}

func FuzzParseReport(f *testing.F) {
	good, _ := reportPacket(sim.RxReport{Signal: 0.01, Recv: 1000, Mode: 1}, 9).Marshal()
	remb, _ := reportPacket(sim.RxReport{Rate: 1e6}, 9).Marshal()
	f.Add(good)
	f.Add(remb)
	f.Add([]byte{0x80, 204, 0, 1, 0, 0, 0, 1})
	f.Fuzz(func(t *testing.T, b []byte) {
		it := rtcpview.Iterate(b)
		for p, ok := it.Next(); ok; p, ok = it.Next() {
			r, isReport, err := parseReport(p)
			if isReport && err == nil && (r.Rate < 0 || r.Recv < 0 || r.Signal < 0) {
				t.Fatalf("negative values accepted: %+v", r)
			}
		}
	})
}

package gcc

import (
	"encoding/binary"
	"testing"
	"time"

	"github.com/strata-rtc/strata/cc"
	"github.com/strata-rtc/strata/cc/internal/cctest"
)

// seedCorpus adds a few plausible inputs: a steady stream, a stream with losses, and time going
// backwards.
func seedCorpus(f *testing.F) {
	enc := func(ts []int32) []byte {
		var b []byte
		for _, v := range ts {
			b = append(b, 1) // milliseconds
			b = binary.LittleEndian.AppendUint32(b, uint32(v))
		}
		return b
	}
	var steadyFb []byte
	for k := int32(0); k < 5; k++ {
		steadyFb = append(steadyFb, enc([]int32{50*k + 100})...)
		steadyFb = append(steadyFb, 10)
		for i := int32(0); i < 10; i++ {
			seq := 10*k + i
			steadyFb = append(steadyFb, byte(seq%7/6), byte(seq), 0)
			steadyFb = append(steadyFb, enc([]int32{5 * seq, 5*seq + 40})...)
			steadyFb = append(steadyFb, 0xb0, 0x04)
		}
	}
	f.Add(steadyFb)
	f.Add(enc([]int32{1000, -5, 3, 1 << 30, -(1 << 30)}))
	f.Add([]byte{})
}

func checkController(t *testing.T, c cc.RateController) {
	t.Helper()
	if err := cctest.CheckRates(c.TargetRate(), c.PacingRate()); err != nil {
		t.Fatal(err)
	}
	if err := cctest.CheckState(c.State()); err != nil {
		t.Fatal(err)
	}
}

func FuzzRateControllersFeedback(f *testing.F) {
	seedCorpus(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, c := range []cc.RateController{NewSender(), NewDraftSender()} {
			for _, fb := range cctest.FuzzFeedback(data) {
				for _, p := range fb.Packets {
					c.OnPacketSent(cc.SentPacket{SeqNo: p.SeqNo, SendTime: p.SendTime, Size: p.Size, ProbeCluster: p.ProbeCluster})
				}
				c.OnFeedback(fb)
				if len(fb.Packets) > 0 {
					c.OnRTT(fb.Now, fb.Now-fb.Packets[0].SendTime)
				}
				c.OnTick(fb.Now + 25*time.Millisecond)
				if p, ok := c.(cc.Prober); ok {
					p.NextProbe(fb.Now)
				}
				checkController(t, c)
			}
		}
	})
}

func FuzzReceiverPackets(f *testing.F) {
	seedCorpus(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		r := NewReceiver()
		for _, p := range cctest.FuzzReceived(data) {
			r.OnPacket(p)
			if v, _ := r.REMB(p.Arrival); v < 0 {
				t.Fatalf("negative REMB %d", v)
			}
			if err := cctest.CheckState(r.State()); err != nil {
				t.Fatal(err)
			}
		}
	})
}

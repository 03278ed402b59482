package dc

import (
	"context"
	"testing"
	"time"
)

// A generated stream crosses two Pion PeerConnections, opener sending (put), every byte checked,
// with both variants.
func TestTransferPionToPion(t *testing.T) {
	for _, variant := range []string{VariantLEDBAT, VariantLEDBATPlus} {
		t.Run(variant, func(t *testing.T) {
			p := newPCPair(t)
			const n = 3 << 20
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			ch, err := p.a.CreateDataChannel(Label(VerbPut, "gen:3145728"), Init())
			if err != nil {
				t.Fatal(err)
			}
			got := make(chan error, 1)
			v := &Verifier{N: n}
			var progress []Progress
			go func() {
				acc := <-p.accepted
				verb, name, err := ParseLabel(acc.Label())
				if err != nil || verb != VerbPut || name != "gen:3145728" || acc.Protocol() != Protocol {
					got <- err
					return
				}
				_, err = Receive(ctx, acc, v, Options{})
				got <- err
			}()
			st, err := Send(ctx, ch, Generated(n), Options{Variant: variant, Progress: func(pr Progress) { progress = append(progress, pr) }})
			if err != nil {
				t.Fatal(err)
			}
			if err := <-got; err != nil {
				t.Fatal(err)
			}
			if err := v.Check(); err != nil {
				t.Fatal(err)
			}
			if st.Bytes != n || len(progress) == 0 || !progress[len(progress)-1].Done {
				t.Fatalf("stats %+v, %d progress reports", st, len(progress))
			}
			t.Logf("%s: %d bytes in %v (%d retransmissions), last progress %+v", variant, st.Bytes, st.Elapsed, st.Retransmits, progress[len(progress)-1])
		})
	}
}

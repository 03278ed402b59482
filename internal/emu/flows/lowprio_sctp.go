package flows

import (
	"context"
	"fmt"

	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/internal/emu/endpoint"
)

// An SCTP bulk sender writes bulkMessage-byte messages (the size browsers' file-transfer code
// commonly uses, and that every browser accepts) while the channel's bufferedAmount is at most
// bulkHigh, then waits for it to fall to bulkLow. bulkHigh is several times the path's largest
// window (1 Mbit/s × 100 ms plus a 60 KB queue is about 73 KB), so SCTP always has data to send,
// and the application-side queue stays bounded.
const (
	bulkMessage = 16 << 10
	bulkHigh    = 256 << 10
	bulkLow     = 128 << 10
)

// sendBulk writes to ch until ctx ends or the channel fails.
func sendBulk(ctx context.Context, ch *webrtc.DataChannel) error {
	low := make(chan struct{}, 1)
	ch.SetBufferedAmountLowThreshold(bulkLow)
	ch.OnBufferedAmountLow(func() {
		select {
		case low <- struct{}{}:
		default:
		}
	})
	msg := make([]byte, bulkMessage)
	for {
		for ch.BufferedAmount() <= bulkHigh {
			if err := ch.Send(msg); err != nil {
				if ctx.Err() != nil {
					return nil // closed by Stop
				}
				return fmt.Errorf("sctp bulk send: %w", err)
			}
		}
		select {
		case <-low:
		case <-ctx.Done():
			return nil
		}
	}
}

// receiveBulk counts every message ch delivers as goodput (a reliable, ordered channel delivers
// each byte once, in order).
func receiveBulk(ch *webrtc.DataChannel, rec endpoint.Recorder) {
	ch.OnMessage(func(m webrtc.DataChannelMessage) { rec.Goodput(len(m.Data)) })
}

package videocall

import (
	"github.com/pion/webrtc/v4"
)

const (
	// defaultLabel is janus.js's data channel label: the channel strata opens towards the callee
	// when the caller offered data channels, so that the callee's offer has an application m-line.
	defaultLabel = "JanusDataChannel"
	// maxPending bounds the messages kept for a channel that is not open yet.
	maxPending = 64
	// maxBuffered is how much may wait in a channel's SCTP send buffer; beyond it messages to that
	// user are dropped (and counted) rather than queued without bound behind a slow receiver.
	maxBuffered = 1 << 20
)

// channel is one data channel of a leg, by label, with what waits for it to open.
type channel struct {
	dc      *webrtc.DataChannel
	pending []webrtc.DataChannelMessage
}

// watchData relays the data channels the user opens, as Janus's videocall relays data: a message
// on a channel goes to the other user's channel of the same label, opened on demand.
func (l *leg) watchData() {
	l.peer.PC.OnDataChannel(func(dc *webrtc.DataChannel) {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.addChannelLocked(dc)
	})
}

// openData opens strata's channel towards this user before an offer, for its application m-line.
func (l *leg) openData() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, err := l.channelLocked(defaultLabel)
	return err
}

// addChannelLocked relays what arrives on dc; the first channel of a label is the one messages
// of that label are sent on.
func (l *leg) addChannelLocked(dc *webrtc.DataChannel) *channel {
	label := dc.Label()
	ch := l.channels[label]
	if ch == nil {
		ch = &channel{dc: dc}
		l.channels[label] = ch
		dc.OnOpen(func() { l.flush(label) })
	}
	dc.OnMessage(func(m webrtc.DataChannelMessage) { l.c.relayData(l, label, m) })
	return ch
}

// channelLocked is this leg's channel of a label, created when it has none.
func (l *leg) channelLocked(label string) (*channel, error) {
	if ch := l.channels[label]; ch != nil {
		return ch, nil
	}
	dc, err := l.peer.PC.CreateDataChannel(label, nil)
	if err != nil {
		return nil, err
	}
	return l.addChannelLocked(dc), nil
}

// relayData sends what one user sent on a channel to the other user.
func (c *call) relayData(from *leg, label string, m webrtc.DataChannelMessage) {
	select {
	case <-c.done:
		return
	default:
	}
	c.other(from).sendData(label, m)
}

// sendData sends a message on this leg's channel of the label, or keeps it until the channel
// opens; what does not fit is dropped and counted.
func (l *leg) sendData(label string, m webrtc.DataChannelMessage) {
	l.mu.Lock()
	ch, err := l.channelLocked(label)
	if err != nil {
		l.mu.Unlock()
		l.s.log.Debug("opening data channel", "label", label, "err", err)
		l.dataDropped.Add(1)
		return
	}
	if ch.dc.ReadyState() != webrtc.DataChannelStateOpen {
		if len(ch.pending) < maxPending {
			ch.pending = append(ch.pending, m)
		} else {
			l.dataDropped.Add(1)
		}
		l.mu.Unlock()
		return
	}
	l.mu.Unlock()
	l.write(ch.dc, m)
}

// flush sends what waited for the channel of a label to open.
func (l *leg) flush(label string) {
	l.mu.Lock()
	ch := l.channels[label]
	var pending []webrtc.DataChannelMessage
	if ch != nil {
		pending, ch.pending = ch.pending, nil
	}
	l.mu.Unlock()
	for _, m := range pending {
		l.write(ch.dc, m)
	}
}

// write sends one message as it came (text or binary), unless the channel's send buffer is full.
func (l *leg) write(dc *webrtc.DataChannel, m webrtc.DataChannelMessage) {
	if dc.BufferedAmount() > maxBuffered {
		l.dataDropped.Add(1)
		return
	}
	var err error
	if m.IsString {
		err = dc.SendText(string(m.Data))
	} else {
		err = dc.Send(m.Data)
	}
	if err != nil {
		l.dataDropped.Add(1)
		l.s.log.Debug("relaying data", "label", dc.Label(), "err", err)
	}
}

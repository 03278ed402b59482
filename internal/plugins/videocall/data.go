package videocall

import (
	"sync"

	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/internal/sfu"
)

// Data channels, as Janus's videocall relays them: a message one user sends on a channel goes to
// the other user's channel of the same label, opened on demand, text as text and binary as
// binary. The relay is the media core's (sfu.DataReceiver/DataSink): what a user sends on a label
// is a DataReceiver, whose sink is the other user's channel of that label; the sink queues what
// arrives before its channel opens, and a user that does not read loses messages itself (counted
// in handle_info's data_dropped) without holding up the sender.

// defaultLabel is janus.js's data channel label: the channel strata opens towards the callee when
// the caller offered data channels, so that the callee's offer has an application m-line.
const defaultLabel = "JanusDataChannel"

// channel is a label's data channels on one leg: the first one (what the other user's messages of
// that label are sent on, through sink) and what this user sends on any channel of that label.
type channel struct {
	label string
	sink  *sfu.DataSink     // messages to this user
	recv  *sfu.DataReceiver // messages from this user

	// mu serialises the writes of this user's channels of the label (DataReceiver.Write is
	// called by one goroutine at a time, and Pion reads each channel on its own) with linking
	// recv to the other user's sink and with the call's end.
	mu  sync.Mutex
	out *sfu.DataSink // the other user's sink recv feeds, once this user sent on the label
}

// watchData relays the data channels the user opens.
func (l *leg) watchData() {
	l.peer.OnDataChannel(func(dc *webrtc.DataChannel) {
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

// addChannelLocked relays what this user sends on dc; the first channel of a label is the one the
// other user's messages of that label are sent on. The Peer closes dc before its PeerConnection,
// so that the browser sees a plain close rather than an SCTP abort.
func (l *leg) addChannelLocked(dc *webrtc.DataChannel) *channel {
	l.peer.TrackDataChannel(dc)
	ch := l.channels[dc.Label()]
	if ch == nil {
		ch = &channel{
			label: dc.Label(),
			sink:  sfu.NewPionDataSink(dc, l.c.p.cfg.DataChannels),
			recv:  sfu.NewDataReceiver(false),
		}
		l.channels[ch.label] = ch
	}
	dc.OnMessage(func(m webrtc.DataChannelMessage) { l.c.relayData(l, ch, m) })
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

// sinkFor is the sink of this leg's channel of a label, opened on demand.
func (l *leg) sinkFor(label string) (*sfu.DataSink, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	ch, err := l.channelLocked(label)
	if err != nil {
		return nil, err
	}
	return ch.sink, nil
}

// relayData sends what one user sent on a channel to the other user's channel of its label,
// opening that channel with the label's first message.
func (c *call) relayData(from *leg, ch *channel, m webrtc.DataChannelMessage) {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	select {
	case <-c.done:
		return
	default:
	}
	if ch.out == nil {
		to := c.other(from)
		sink, err := to.sinkFor(ch.label)
		if err != nil {
			from.s.log.Debug("opening data channel", "label", ch.label, "err", err)
			to.dataUnsent.Add(1)
			return
		}
		ch.out = sink
		ch.recv.AddSink(sink)
	}
	ch.recv.Write(m.Data, !m.IsString)
}

// stopData detaches this user's messages from the other user's channels; the channels stay open
// until the Peer closes them, before its PeerConnection.
func (l *leg) stopData() {
	for _, ch := range l.channelList() {
		ch.mu.Lock()
		if ch.out != nil {
			ch.recv.RemoveSink(ch.out)
		}
		ch.mu.Unlock()
	}
}

func (l *leg) channelList() []*channel {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]*channel, 0, len(l.channels))
	for _, ch := range l.channels {
		out = append(out, ch)
	}
	return out
}

// dataDropped counts the messages to this user that were dropped: refused by its channels' full
// queues, or with no channel to send them on.
func (l *leg) dataDropped() uint64 {
	n := l.dataUnsent.Load()
	for _, ch := range l.channelList() {
		n += ch.sink.Stats().Dropped
	}
	return n
}

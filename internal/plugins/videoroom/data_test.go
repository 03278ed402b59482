package videoroom_test

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/internal/config"
	"github.com/strata-rtc/strata/internal/janusclient"
	"github.com/strata-rtc/strata/internal/plugins/videoroom"
)

// dataPublisher publishes an audio m-line (sending nothing, unless dataOnly) and a data channel.
type dataPublisher struct {
	h        *janusclient.Handle
	pc       *webrtc.PeerConnection
	dc       *webrtc.DataChannel
	id       uint64
	audioMid string
	dataMid  string
}

func startDataPublisher(t *testing.T, c *janusclient.Client, room uint64) *dataPublisher {
	t.Helper()
	return startDataPublisherWith(t, c, room, false)
}

func startDataPublisherWith(t *testing.T, c *janusclient.Client, room uint64, dataOnly bool) *dataPublisher {
	t.Helper()
	p := &dataPublisher{h: attach(t, c)}
	joined, _ := mustRequest(t, p.h, map[string]any{"request": "join", "ptype": "publisher", "room": room, "display": "data"}, nil)
	p.id = uint64(joined["id"].(float64))
	pc, err := clientAPI(t, nil).NewPeerConnection(webrtc.Configuration{})
	if err != nil {
		t.Fatal(err)
	}
	p.pc = pc
	t.Cleanup(func() { _ = pc.Close() })
	if !dataOnly {
		opus := webrtc.RTPCodecCapability{MimeType: webrtc.MimeTypeOpus, ClockRate: 48000, Channels: 2}
		tr, err := webrtc.NewTrackLocalStaticRTP(opus, "audio", "publisher")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := pc.AddTrack(tr); err != nil {
			t.Fatal(err)
		}
	}
	if p.dc, err = pc.CreateDataChannel("chat", nil); err != nil {
		t.Fatal(err)
	}
	opened := make(chan struct{})
	p.dc.OnOpen(func() { close(opened) })
	offer, err := pc.CreateOffer(nil)
	if err != nil {
		t.Fatal(err)
	}
	data, answer := mustRequest(t, p.h, map[string]any{"request": "publish"}, completeLocal(t, pc, offer))
	if data["configured"] != "ok" || answer == nil {
		t.Fatalf("publish: %v", data)
	}
	streams, _ := data["streams"].([]any)
	for _, s := range streams {
		st := s.(map[string]any)
		switch st["type"] {
		case "audio":
			p.audioMid, _ = st["mid"].(string)
		case "data":
			p.dataMid, _ = st["mid"].(string)
			if want := map[bool]float64{false: 1, true: 0}[dataOnly]; st["mindex"] != want {
				t.Errorf("data stream: %v", st)
			}
		}
	}
	if p.audioMid == "" && !dataOnly || p.dataMid == "" {
		t.Fatalf("publish: streams %v, want audio and data", streams)
	}
	if err := pc.SetRemoteDescription(webrtc.SessionDescription{Type: webrtc.SDPTypeAnswer, SDP: answer.SDP}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-opened:
	case <-time.After(10 * time.Second):
		t.Fatal("the publisher's data channel did not open")
	}
	waitPublishing(t, p.h, room, p.id)
	return p
}

// waitPublishing waits until the room lists id as publishing (strata marks it so once its
// PeerConnection is up, a moment after the client sees it up).
func waitPublishing(t *testing.T, h *janusclient.Handle, room, id uint64) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		data, _ := mustRequest(t, h, map[string]any{"request": "listparticipants", "room": room}, nil)
		list, _ := data["participants"].([]any)
		for _, e := range list {
			if p, _ := e.(map[string]any); p != nil && p["id"] == float64(id) && p["publisher"] == true {
				return
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("participant %d is not publishing", id)
}

// send sends n messages "<tag> <i>", odd ones as binary.
func (p *dataPublisher) send(t *testing.T, tag string, n int) {
	t.Helper()
	for i := range n {
		var err error
		if msg := fmt.Sprint(tag, " ", i); i%2 == 1 {
			err = p.dc.Send([]byte(msg))
		} else {
			err = p.dc.SendText(msg)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// dataMsg is one message a subscriber received, with the label of its channel.
type dataMsg struct {
	label  string
	text   string
	binary bool
}

// dataSubscriber receives a subscription's data channels.
type dataSubscriber struct {
	t    *testing.T
	h    *janusclient.Handle
	pc   *webrtc.PeerConnection
	msgs chan dataMsg
	// received counts the messages collected (a slow subscriber's are not).
	received atomic.Int64

	mu     sync.Mutex
	closed map[string]bool
	labels []string
}

// subscribeData joins as a subscriber with streams; slow, when set, is called for each message
// (a slow client blocks in it) instead of collecting it.
func subscribeData(t *testing.T, c *janusclient.Client, room uint64, streams []map[string]any, slow func()) (*dataSubscriber, map[string]any) {
	t.Helper()
	s := &dataSubscriber{t: t, h: attach(t, c), msgs: make(chan dataMsg, 10000), closed: map[string]bool{}}
	data, offer := mustRequest(t, s.h, map[string]any{"request": "join", "ptype": "subscriber", "room": room, "streams": streams}, nil)
	if data["videoroom"] != "attached" || offer == nil {
		t.Fatalf("subscribe: %v", data)
	}
	pc, err := clientAPI(t, nil).NewPeerConnection(webrtc.Configuration{})
	if err != nil {
		t.Fatal(err)
	}
	s.pc = pc
	t.Cleanup(func() { _ = pc.Close() })
	pc.OnTrack(func(tr *webrtc.TrackRemote, _ *webrtc.RTPReceiver) { go discardTrack(tr) })
	pc.OnDataChannel(func(dc *webrtc.DataChannel) {
		label := dc.Label()
		s.mu.Lock()
		s.labels = append(s.labels, label)
		s.mu.Unlock()
		dc.OnClose(func() {
			s.mu.Lock()
			s.closed[label] = true
			s.mu.Unlock()
		})
		dc.OnMessage(func(m webrtc.DataChannelMessage) {
			if slow != nil {
				slow()
				return
			}
			s.received.Add(1)
			s.msgs <- dataMsg{label: label, text: string(m.Data), binary: !m.IsString}
		})
	})
	s.answer(offer)
	return s, data
}

func discardTrack(tr *webrtc.TrackRemote) {
	buf := make([]byte, 1500)
	for {
		if _, _, err := tr.Read(buf); err != nil {
			return
		}
	}
}

func (s *dataSubscriber) answer(offer *janusclient.JSEP) {
	s.t.Helper()
	if err := s.pc.SetRemoteDescription(webrtc.SessionDescription{Type: webrtc.SDPTypeOffer, SDP: offer.SDP}); err != nil {
		s.t.Fatal(err)
	}
	answer, err := s.pc.CreateAnswer(nil)
	if err != nil {
		s.t.Fatal(err)
	}
	if started, _ := mustRequest(s.t, s.h, map[string]any{"request": "start"}, completeLocal(s.t, s.pc, answer)); started["started"] != "ok" {
		s.t.Fatalf("start: %v", started)
	}
}

// expect waits for n messages "<tag> <i>" in order on the channel labelled label.
func (s *dataSubscriber) expect(label, tag string, n int) {
	s.t.Helper()
	for i := range n {
		select {
		case m := <-s.msgs:
			if want := fmt.Sprint(tag, " ", i); m.label != label || m.text != want || m.binary != (i%2 == 1) {
				s.t.Fatalf("message %d: got %+v, want %q on channel %q (binary %v)", i, m, want, label, i%2 == 1)
			}
		case <-time.After(10 * time.Second):
			s.t.Fatalf("got %d of %d messages %q on channel %q", i, n, tag, label)
		}
	}
}

// quiet checks that no message arrives for a while.
func (s *dataSubscriber) quiet(within time.Duration) {
	s.t.Helper()
	select {
	case m := <-s.msgs:
		s.t.Fatalf("unexpected message %+v", m)
	case <-time.After(within):
	}
}

func (s *dataSubscriber) channelClosed(label string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed[label]
}

// waitClosed waits for the channel labelled label to close.
func (s *dataSubscriber) waitClosed(label string) {
	s.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !s.channelClosed(label) {
		if time.Now().After(deadline) {
			s.t.Fatalf("channel %q did not close", label)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitOpenChannels waits until the subscriber has n channels.
func (s *dataSubscriber) waitChannels(n int) {
	s.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		s.mu.Lock()
		got := len(s.labels)
		s.mu.Unlock()
		if got >= n {
			return
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("%d data channels, want %d", got, n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// dataEntry is the data stream of an attached/updated event's streams.
func dataEntry(ev map[string]any) map[string]any {
	streams, _ := ev["streams"].([]any)
	for _, s := range streams {
		if st, _ := s.(map[string]any); st != nil && st["type"] == "data" {
			return st
		}
	}
	return nil
}

// sourceIDs are a data stream's source_ids.
func sourceIDs(d map[string]any) []uint64 {
	ids, _ := d["source_ids"].([]any)
	out := []uint64{}
	for _, id := range ids {
		f, _ := id.(float64)
		out = append(out, uint64(f))
	}
	return out
}

// TestDataChannelsRelayed: a publisher's text and binary messages reach, in order and on a channel
// labelled with the publisher's id, the subscribers that asked for its data mid (or the whole
// feed), and not the one that asked for its audio only; the publisher leaving closes the channels.
func TestDataChannelsRelayed(t *testing.T) {
	c := startServer(t, nil)
	const room = 1234
	pub := startDataPublisher(t, c, room)
	label := strconv.FormatUint(pub.id, 10)
	byMid, attached := subscribeData(t, c, room, []map[string]any{{"feed": pub.id, "mid": pub.dataMid}}, nil)
	if d := dataEntry(attached); d == nil || d["sources"] != 1.0 || fmt.Sprint(sourceIDs(d)) != fmt.Sprint([]uint64{pub.id}) {
		t.Errorf("attached: data stream %v", d)
	}
	whole, attached := subscribeData(t, c, room, []map[string]any{{"feed": pub.id}}, nil)
	if streams, _ := attached["streams"].([]any); len(streams) != 2 || dataEntry(attached) == nil {
		t.Errorf("attached for the whole feed: %v", attached["streams"])
	}
	audio, attached := subscribeData(t, c, room, []map[string]any{{"feed": pub.id, "mid": pub.audioMid}}, nil)
	if dataEntry(attached) != nil || strings.Contains(audio.pc.RemoteDescription().SDP, "m=application") {
		t.Errorf("an audio-only subscription has a data m-line: %v", attached["streams"])
	}
	byMid.waitChannels(1)
	whole.waitChannels(1)
	pub.send(t, "hello", 50)
	byMid.expect(label, "hello", 50)
	whole.expect(label, "hello", 50)
	audio.quiet(300 * time.Millisecond)

	mustRequest(t, pub.h, map[string]any{"request": "leave"}, nil)
	byMid.waitClosed(label)
	whole.waitClosed(label)

	// A publisher of data alone is a feed like any other.
	only := startDataPublisherWith(t, c, room, true)
	sub, attached := subscribeData(t, c, room, []map[string]any{{"feed": only.id}}, nil)
	if streams, _ := attached["streams"].([]any); len(streams) != 1 || dataEntry(attached)["mindex"] != 0.0 {
		t.Errorf("attached to a data-only feed: %v", attached["streams"])
	}
	sub.waitChannels(1)
	only.send(t, "alone", 10)
	sub.expect(strconv.FormatUint(only.id, 10), "alone", 10)
}

// TestDataSubscribeUpdate: data added to and removed from a subscription by update, and a second
// publisher's data arriving on its own channel over the same SCTP association.
func TestDataSubscribeUpdate(t *testing.T) {
	c := startServer(t, nil)
	const room = 1234
	a := startDataPublisher(t, c, room)
	b := startDataPublisher(t, c, room)
	la, lb := strconv.FormatUint(a.id, 10), strconv.FormatUint(b.id, 10)
	sub, _ := subscribeData(t, c, room, []map[string]any{{"feed": a.id, "mid": a.audioMid}}, nil)

	ev, offer := mustRequest(t, sub.h, map[string]any{"request": "update", "subscribe": []map[string]any{
		{"feed": a.id, "mid": a.dataMid}, {"feed": b.id, "mid": b.dataMid}}}, nil)
	if ev["videoroom"] != "updated" || offer == nil || !strings.Contains(offer.SDP, "m=application") {
		t.Fatalf("update: %v", ev)
	}
	if d := dataEntry(ev); d == nil || d["sources"] != 2.0 {
		t.Errorf("updated: data stream %v", d)
	}
	if n := strings.Count(offer.SDP, "m=application"); n != 1 {
		t.Errorf("%d application m-lines for two feeds, want one", n)
	}
	sub.answer(offer)
	sub.waitChannels(2)
	a.send(t, "from a", 20)
	sub.expect(la, "from a", 20)
	b.send(t, "from b", 20)
	sub.expect(lb, "from b", 20)

	ev, _ = mustRequest(t, sub.h, map[string]any{"request": "unsubscribe", "streams": []map[string]any{{"feed": a.id, "mid": a.dataMid}}}, nil)
	if d := dataEntry(ev); d == nil || fmt.Sprint(sourceIDs(d)) != fmt.Sprint([]uint64{b.id}) {
		t.Errorf("after unsubscribing a's data: %v", d)
	}
	sub.waitClosed(la)
	a.send(t, "gone", 5)
	b.send(t, "still b", 5)
	sub.expect(lb, "still b", 5) // nothing from a in between

	// configure's send on the data mid, and pause, stop the relay; start resumes it.
	dataMid, _ := dataEntry(ev)["mid"].(string)
	_, _, err := request(t, sub.h, map[string]any{"request": "configure", "streams": []map[string]any{{"mid": dataMid, "send": "no"}}}, nil)
	wantCode(t, err, videoroom.ErrInvalidElement)
	mustRequest(t, sub.h, map[string]any{"request": "configure", "streams": []map[string]any{{"mid": dataMid, "send": false}}}, nil)
	b.send(t, "muted", 5)
	sub.quiet(300 * time.Millisecond)
	mustRequest(t, sub.h, map[string]any{"request": "configure", "streams": []map[string]any{{"mid": dataMid, "send": true}}}, nil)
	b.send(t, "unmuted", 5)
	sub.expect(lb, "unmuted", 5)
	mustRequest(t, sub.h, map[string]any{"request": "pause"}, nil)
	b.send(t, "paused", 5)
	sub.quiet(300 * time.Millisecond)
	mustRequest(t, sub.h, map[string]any{"request": "start"}, nil)
	b.send(t, "resumed", 5)
	sub.expect(lb, "resumed", 5)
}

// TestDataSlowSubscriberDoesNotStallOthers: a subscriber that never returns from its message
// handler (its SCTP receive window fills) loses messages; the other subscribers get every one.
func TestDataSlowSubscriberDoesNotStallOthers(t *testing.T) {
	admin := "http://" + freeAddr(t) + "/admin"
	c := startServer(t, func(cfg *config.Config) {
		cfg.Transports.Admin.Enabled = true
		cfg.Transports.Admin.Listen = strings.TrimSuffix(strings.TrimPrefix(admin, "http://"), "/admin")
		cfg.Transports.Admin.AdminSecret = adminSecret
	})
	const room = 1234
	pub := startDataPublisher(t, c, room)
	label := strconv.FormatUint(pub.id, 10)
	release := make(chan struct{})
	defer close(release)
	streams := []map[string]any{{"feed": pub.id, "mid": pub.dataMid}}
	slow, _ := subscribeData(t, c, room, streams, func() { <-release })
	fast := []*dataSubscriber{}
	for range 2 {
		s, _ := subscribeData(t, c, room, streams, nil)
		fast = append(fast, s)
	}
	slow.waitChannels(1)
	for _, s := range fast {
		s.waitChannels(1)
	}
	// 3 MB: more than the slow client's SCTP window, strata's send buffer and queue together.
	const n = 3000
	pad := bytes.Repeat([]byte{'.'}, 1000)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range n {
			if err := pub.dc.Send(append([]byte(fmt.Sprint(i, " ")), pad...)); err != nil {
				t.Error(err)
				return
			}
			// The publisher's pace is what the fast subscribers take (however slow this machine is
			// right now): the slow one has no say in it.
			for _, s := range fast {
				for int64(i)-s.received.Load() > 200 {
					time.Sleep(time.Millisecond)
				}
			}
		}
	}()
	for k, s := range fast {
		for i := range n {
			select {
			case m := <-s.msgs:
				if want := fmt.Sprint(i, " "); m.label != label || !strings.HasPrefix(m.text, want) || len(m.text) != len(want)+len(pad) {
					t.Fatalf("fast subscriber %d, message %d: %.12q", k, i, m.text)
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("fast subscriber %d got %d of %d messages", k, i, n)
			}
		}
	}
	<-done
	var dropped, messages float64
	found := forEachHandleInfo(admin, func(info map[string]any) bool {
		ps, _ := info["plugin_specific"].(map[string]any)
		streams, _ := ps["streams"].([]any)
		for _, s := range streams {
			st, _ := s.(map[string]any)
			if st == nil || st["type"] != "data" {
				continue
			}
			if d, _ := st["dropped"].(float64); d > 0 {
				dropped, messages = d, st["messages"].(float64)
				return true
			}
		}
		return false
	})
	if !found {
		t.Fatal("no subscriber dropped data messages: the slow one should have")
	}
	t.Logf("slow subscriber: %v messages sent, %v dropped", messages, dropped)
}

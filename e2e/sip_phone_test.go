package e2e

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/pion/rtp"
	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/internal/audio"
	"github.com/strata-rtc/strata/internal/janusclient"
	"github.com/strata-rtc/strata/internal/siplab"
)

// webPhone is a WebRTC client of janus.plugin.sip as a browser is one: a Pion PeerConnection
// offering Opus, G.711 and telephone-event as Chrome does, sending a tone (encoded in real time),
// decoding what it receives and noting the RFC 4733 events it receives; it speaks the plugin's
// Janus API through a handle.
type webPhone struct {
	t    *testing.T
	h    *janusclient.Handle
	pc   *webrtc.PeerConnection
	tone float64

	track   *phoneTrack
	dec     map[uint8]audio.FrameDecoder // the server's audio payload types
	event   map[uint8]bool               // and its telephone-event ones
	dtmfOut chan string
	stop    chan struct{}
	stopped sync.WaitGroup

	mu       sync.Mutex
	pcm      []int16 // decoded audio received, 48 kHz mono
	dtmfIn   string  // digits received in RTP
	events   []map[string]any
	evSignal chan struct{}
}

const phoneRate = 48000

// newWebPhone attaches a handle of janus.plugin.sip on a new session of the server's WebSocket API.
func newWebPhone(t *testing.T, wsAPI string, tone float64) *webPhone {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := janusclient.Dial(ctx, wsAPI, janusclient.WithKeepalive(15*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	s, err := c.Create(ctx)
	if err != nil {
		t.Fatal(err)
	}
	h, err := s.Attach(ctx, "janus.plugin.sip")
	if err != nil {
		t.Fatal(err)
	}
	p := &webPhone{t: t, h: h, tone: tone, dtmfOut: make(chan string, 8), stop: make(chan struct{}), evSignal: make(chan struct{}, 1)}
	go p.collect()
	t.Cleanup(p.close)
	return p
}

// collect keeps the handle's plugin events.
func (p *webPhone) collect() {
	for ev := range p.h.Events() {
		if ev.PluginData == nil {
			continue
		}
		var d map[string]any
		if json.Unmarshal(ev.PluginData.Data, &d) != nil {
			continue
		}
		if ev.JSEP != nil {
			d["_jsep"] = ev.JSEP
		}
		p.mu.Lock()
		p.events = append(p.events, d)
		p.mu.Unlock()
		select {
		case p.evSignal <- struct{}{}:
		default:
		}
	}
}

// request sends a message and returns the plugin's reply data (after an ack, the event with the
// same transaction).
func (p *webPhone) request(body map[string]any, jsep *janusclient.JSEP) (map[string]any, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	ev, err := p.h.Message(ctx, body, jsep)
	if err != nil {
		return nil, err
	}
	var d map[string]any
	if ev.PluginData != nil {
		_ = json.Unmarshal(ev.PluginData.Data, &d)
	}
	if ev.JSEP != nil {
		d["_jsep"] = ev.JSEP
	}
	if d["sip"] == "event" {
		p.mu.Lock()
		p.events = append(p.events, d)
		p.mu.Unlock()
	}
	return d, nil
}

func (p *webPhone) mustRequest(body map[string]any, jsep *janusclient.JSEP) map[string]any {
	p.t.Helper()
	d, err := p.request(body, jsep)
	if err != nil {
		p.t.Fatalf("%v: %v", body["request"], err)
	}
	if code, ok := d["error_code"]; ok {
		p.t.Fatalf("%v: error %v: %v", body["request"], code, d["error"])
	}
	return d
}

// waitEvent returns the first not yet returned sip event whose result.event is name.
func (p *webPhone) waitEvent(name string, within time.Duration) map[string]any {
	p.t.Helper()
	deadline := time.After(within)
	for {
		p.mu.Lock()
		for i, d := range p.events {
			if res, ok := d["result"].(map[string]any); ok && res["event"] == name {
				p.events = append(p.events[:i:i], p.events[i+1:]...)
				p.mu.Unlock()
				return d
			}
		}
		seen := p.eventNames()
		p.mu.Unlock()
		select {
		case <-p.evSignal:
		case <-time.After(50 * time.Millisecond):
		case <-deadline:
			p.t.Fatalf("no %q event within %v (pending: %v)", name, within, seen)
		}
	}
}

// eventNames lists the pending events (under mu).
func (p *webPhone) eventNames() []string {
	var names []string
	for _, d := range p.events {
		if res, ok := d["result"].(map[string]any); ok {
			names = append(names, res["event"].(string))
		} else if e, ok := d["error"]; ok {
			names = append(names, "error: "+e.(string))
		}
	}
	return names
}

// register registers user through the lab's proxy with its password (digest authentication).
func (p *webPhone) register(lab *siplab.Lab, u siplab.User) {
	p.t.Helper()
	p.mustRequest(map[string]any{"request": "register", "username": lab.URI(u), "secret": u.Password,
		"proxy": "sip:" + lab.Registrar}, nil)
	p.waitEvent("registered", 10*time.Second)
}

// newPC creates the PeerConnection with an audio transceiver sending the tone.
func (p *webPhone) newPC() {
	p.t.Helper()
	me := &webrtc.MediaEngine{}
	for _, c := range []webrtc.RTPCodecParameters{
		{RTPCodecCapability: webrtc.RTPCodecCapability{MimeType: webrtc.MimeTypeOpus, ClockRate: 48000, Channels: 2, SDPFmtpLine: "minptime=10;useinbandfec=1"}, PayloadType: 111},
		{RTPCodecCapability: webrtc.RTPCodecCapability{MimeType: webrtc.MimeTypePCMU, ClockRate: 8000}, PayloadType: 0},
		{RTPCodecCapability: webrtc.RTPCodecCapability{MimeType: webrtc.MimeTypePCMA, ClockRate: 8000}, PayloadType: 8},
		{RTPCodecCapability: webrtc.RTPCodecCapability{MimeType: "audio/telephone-event", ClockRate: 48000, SDPFmtpLine: "0-16"}, PayloadType: 110},
		{RTPCodecCapability: webrtc.RTPCodecCapability{MimeType: "audio/telephone-event", ClockRate: 8000, SDPFmtpLine: "0-16"}, PayloadType: 126},
	} {
		if err := me.RegisterCodec(c, webrtc.RTPCodecTypeAudio); err != nil {
			p.t.Fatal(err)
		}
	}
	pc, err := webrtc.NewAPI(webrtc.WithMediaEngine(me)).NewPeerConnection(webrtc.Configuration{})
	if err != nil {
		p.t.Fatal(err)
	}
	p.pc = pc
	p.track = &phoneTrack{}
	if _, err := pc.AddTransceiverFromTrack(p.track, webrtc.RTPTransceiverInit{Direction: webrtc.RTPTransceiverDirectionSendrecv}); err != nil {
		p.t.Fatal(err)
	}
	pc.OnTrack(func(tr *webrtc.TrackRemote, _ *webrtc.RTPReceiver) { p.receive(tr) })
	p.stopped.Add(1)
	go p.send()
}

// offer makes the complete (half-trickle) offer.
func (p *webPhone) offer() *janusclient.JSEP {
	p.t.Helper()
	if p.pc == nil {
		p.newPC()
	}
	o, err := p.pc.CreateOffer(nil)
	if err != nil {
		p.t.Fatal(err)
	}
	return p.complete(o)
}

// answer applies the server's offer and returns the complete answer.
func (p *webPhone) answer(offer *janusclient.JSEP) *janusclient.JSEP {
	p.t.Helper()
	if p.pc == nil {
		p.newPC()
	}
	p.setRemote(offer)
	a, err := p.pc.CreateAnswer(nil)
	if err != nil {
		p.t.Fatal(err)
	}
	return p.complete(a)
}

func (p *webPhone) complete(d webrtc.SessionDescription) *janusclient.JSEP {
	p.t.Helper()
	gathered := webrtc.GatheringCompletePromise(p.pc)
	if err := p.pc.SetLocalDescription(d); err != nil {
		p.t.Fatal(err)
	}
	select {
	case <-gathered:
	case <-time.After(10 * time.Second):
		p.t.Fatal("candidate gathering did not complete")
	}
	ld := p.pc.LocalDescription()
	return &janusclient.JSEP{Type: ld.Type.String(), SDP: ld.SDP}
}

// setRemote applies the server's description and notes the telephone-event payload type in it.
func (p *webPhone) setRemote(j *janusclient.JSEP) {
	p.t.Helper()
	typ := webrtc.NewSDPType(j.Type)
	if err := p.pc.SetRemoteDescription(webrtc.SessionDescription{Type: typ, SDP: j.SDP}); err != nil {
		p.t.Fatalf("remote %s: %v\n%s", j.Type, err, j.SDP)
	}
	dec, event, err := decodersFor(j.SDP)
	if err != nil {
		p.t.Fatal(err)
	}
	p.mu.Lock()
	p.dec, p.event = dec, event
	p.mu.Unlock()
}

// jsepOf is the JSEP an event carried.
func jsepOf(t *testing.T, d map[string]any) *janusclient.JSEP {
	t.Helper()
	j, ok := d["_jsep"].(*janusclient.JSEP)
	if !ok {
		t.Fatalf("event without jsep: %v", d)
	}
	return j
}

// send paces the tone as 20 ms packets of the negotiated codec, and RFC 4733 events for the
// digits asked for.
func (p *webPhone) send() {
	defer p.stopped.Done()
	frame := make([]int16, phoneRate/50)
	buf := make([]byte, audio.MaxPacket)
	pkt := &rtp.Packet{Header: rtp.Header{Version: 2, Timestamp: 1000}}
	var enc frameEncoder
	var step uint32
	var idx int
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-p.stop:
			return
		case digits := <-p.dtmfOut:
			p.sendEvents(pkt, digits, step, tick)
			continue
		case <-tick.C:
		}
		if enc == nil {
			codec, _, ok := p.track.codecs()
			if !ok {
				continue
			}
			var err error
			if enc, step, err = newFrameEncoder(codec); err != nil {
				p.t.Error(err)
				return
			}
		}
		idx = audio.Tone(frame, 1, phoneRate, p.tone, 12000, idx)
		n, err := enc.Encode(frame, buf)
		if err != nil {
			p.t.Error(err)
			return
		}
		pkt.Payload, pkt.Marker = buf[:n], false
		pkt.SequenceNumber++
		p.track.write(pkt, false)
		pkt.Timestamp += step
	}
}

// sendEvents sends each digit as an RFC 4733 event of 100 ms (five updates and three end packets,
// one per 20 ms) in place of audio, as a browser's RTCDTMFSender does. step is 20 ms in the
// audio's clock (the events' timestamps); durations count in the event's own clock.
func (p *webPhone) sendEvents(pkt *rtp.Packet, digits string, step uint32, tick *time.Ticker) {
	_, ev, _ := p.track.codecs()
	evStep := int(ev.ClockRate / 50)
	for _, d := range digits {
		code := dtmfCode(d)
		start := pkt.Timestamp
		for i := 1; i <= 8; i++ {
			<-tick.C
			payload := []byte{code, 10, 0, 0}
			if i > 5 {
				payload[1] |= 0x80 // end
			}
			binary.BigEndian.PutUint16(payload[2:], uint16(min(i, 5)*evStep))
			pkt.Payload, pkt.Marker, pkt.Timestamp = payload, i == 1, start
			pkt.SequenceNumber++
			if !p.track.write(pkt, true) {
				p.t.Errorf("DTMF %c: no telephone-event negotiated", d)
				return
			}
		}
		pkt.Timestamp = start + 8*step
		for range 3 { // a gap between digits
			<-tick.C
		}
	}
}

func dtmfCode(d rune) byte {
	switch {
	case d >= '0' && d <= '9':
		return byte(d - '0')
	case d == '*':
		return 10
	case d == '#':
		return 11
	}
	return byte(d-'A') + 12
}

// sendDTMF queues digits to go out as RFC 4733 events.
func (p *webPhone) sendDTMF(digits string) { p.dtmfOut <- digits }

// receive decodes the audio packets and notes the digits of the RFC 4733 events.
func (p *webPhone) receive(tr *webrtc.TrackRemote) {
	pcm := make([]int16, phoneRate/50)
	var lastEventTS uint32
	for {
		pkt, _, err := tr.ReadRTP()
		if err != nil {
			return
		}
		p.mu.Lock()
		if dec := p.dec[pkt.PayloadType]; dec != nil {
			if dec.Decode(pkt.Payload, pcm) == nil {
				p.pcm = append(p.pcm, pcm...)
			}
		} else if p.event[pkt.PayloadType] && len(pkt.Payload) >= 4 && pkt.Timestamp != lastEventTS {
			// a new event (its updates and end packets share the first packet's timestamp)
			lastEventTS = pkt.Timestamp
			p.dtmfIn += string("0123456789*#ABCD"[pkt.Payload[0]%16])
		}
		p.mu.Unlock()
	}
}

// heard is the level of freq in the last second of received audio, and how much audio arrived.
func (p *webPhone) heard(freq float64) (level, seconds float64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	pcm := p.pcm
	if len(pcm) > phoneRate {
		pcm = pcm[len(pcm)-phoneRate:]
	}
	return audio.ToneLevel(pcm, 1, 0, phoneRate, freq), float64(len(p.pcm)) / phoneRate
}

// received is how many seconds of audio have arrived.
func (p *webPhone) received() float64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return float64(len(p.pcm)) / phoneRate
}

func (p *webPhone) digits() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.dtmfIn
}

func (p *webPhone) close() {
	if p.pc == nil {
		return
	}
	select {
	case <-p.stop:
	default:
		close(p.stop)
	}
	p.stopped.Wait()
	_ = p.pc.Close()
}

package probe

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/pion/webrtc/v4"
)

// RealOffer is an offer from a real Pion PeerConnection with one audio m-line (sendrecv), without
// candidates: the base that the offer probes grow or trickle junk to.
func RealOffer() (string, error) {
	pc, err := webrtc.NewPeerConnection(webrtc.Configuration{})
	if err != nil {
		return "", err
	}
	defer pc.Close()
	if _, err := pc.AddTransceiverFromKind(webrtc.RTPCodecTypeAudio); err != nil {
		return "", err
	}
	o, err := pc.CreateOffer(nil)
	return o.SDP, err
}

// GrowOffer turns an offer into one with mlines audio m-lines, each with its own mid and as short
// as an m-line can be (the ICE credentials, fingerprint and setup move to the session level, as
// RFC 8839 and 8122 allow, and so does the connection line): about 75 bytes a line, so 10,000 lines stay under the default 1 MB
// message limit and the server's m-line limit, not its message size limit, is what is probed.
func GrowOffer(offer string, mlines int) string {
	var session []string
	for _, l := range strings.Split(offer, "\r\n") {
		if strings.HasPrefix(l, "m=") {
			break
		}
		if l != "" && !strings.HasPrefix(l, "a=group:BUNDLE") {
			session = append(session, l)
		}
		if strings.HasPrefix(l, "s=") {
			session = append(session, "c=IN IP4 0.0.0.0") // before t=, as RFC 8866 orders them
		}
	}
	for _, l := range strings.Split(offer, "\r\n") {
		for _, p := range []string{"a=ice-ufrag:", "a=ice-pwd:", "a=fingerprint:", "a=setup:"} {
			if strings.HasPrefix(l, p) && !slices.Contains(session, l) {
				session = append(session, l)
			}
		}
	}
	var b strings.Builder
	b.WriteString(strings.Join(session, "\r\n") + "\r\na=group:BUNDLE")
	for k := range mlines {
		fmt.Fprintf(&b, " %d", k)
	}
	b.WriteString("\r\n")
	for k := range mlines {
		fmt.Fprintf(&b, "m=audio 9 UDP/TLS/RTP/SAVPF 111\r\na=mid:%d\r\na=rtcp-mux\r\na=rtpmap:111 opus/48000/2\r\n", k)
	}
	return b.String()
}

// OfferResult is the server's answer to one offer.
type OfferResult struct {
	OfferBytes  int           `json:"offer_bytes"`
	Answered    bool          `json:"answered"` // an answer came back
	AnswerBytes int           `json:"answer_bytes"`
	Error       string        `json:"error,omitempty"` // the refusal, when there was one
	Took        time.Duration `json:"took_ns"`
}

// SendOffer creates a session over HTTP, attaches plugin and sends the offer in a message with
// body, then waits up to wait for the answer or the error. The session is left open (the caller
// keeps the PeerConnection alive while it measures) and returned.
func SendOffer(ctx context.Context, base, plugin, body, offer string, wait time.Duration) (OfferResult, uint64, uint64, error) {
	r := OfferResult{OfferBytes: len(offer)}
	sid, hid, err := httpSession(ctx, base, plugin)
	if err != nil {
		return r, 0, 0, err
	}
	jsep, _ := json.Marshal(map[string]string{"type": "offer", "sdp": offer})
	t0 := time.Now()
	_, m, err := httpPost(ctx, fmt.Sprintf("%s/%d/%d", base, sid, hid),
		fmt.Sprintf(`{"janus":"message","transaction":"o","body":%s,"jsep":%s}`, body, jsep))
	if err != nil {
		return r, sid, hid, err
	}
	ev := m
	if m["janus"] == "ack" {
		ev, err = pollEvent(ctx, base, sid, wait)
		if err != nil {
			return r, sid, hid, err
		}
	}
	r.Took = time.Since(t0)
	if j, ok := ev["jsep"].(map[string]any); ok {
		sdp, _ := j["sdp"].(string)
		r.Answered, r.AnswerBytes = true, len(sdp)
	}
	r.Error = eventError(ev)
	return r, sid, hid, nil
}

// pollEvent long-polls the session until an event that answers a message arrives.
func pollEvent(ctx context.Context, base string, sid uint64, wait time.Duration) (map[string]any, error) {
	deadline := time.Now().Add(wait)
	for time.Now().Before(deadline) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("%s/%d?maxev=10", base, sid), nil)
		resp, err := httpClient.Do(req)
		if err != nil {
			return nil, err
		}
		var evs []map[string]any
		dec := json.NewDecoder(resp.Body)
		raw := json.RawMessage{}
		err = dec.Decode(&raw)
		resp.Body.Close()
		if err != nil {
			return nil, err
		}
		if json.Unmarshal(raw, &evs) != nil {
			var one map[string]any
			_ = json.Unmarshal(raw, &one)
			evs = []map[string]any{one}
		}
		for _, ev := range evs {
			if ev["janus"] == "event" || ev["janus"] == "error" {
				return ev, nil
			}
		}
	}
	return nil, fmt.Errorf("no event within %v", wait)
}

// eventError is the error an event or reply carries: Janus's, or the plugin's.
func eventError(ev map[string]any) string {
	if e, ok := ev["error"].(map[string]any); ok {
		return fmt.Sprint(e["reason"])
	}
	pd, _ := ev["plugindata"].(map[string]any)
	data, _ := pd["data"].(map[string]any)
	if e, ok := data["error"]; ok {
		return fmt.Sprint(e)
	}
	return ""
}

// FloodResult is how many connectivity checks a server sent to candidates a client trickled.
type FloodResult struct {
	Candidates int `json:"candidates"`
	Trickled   int `json:"trickled"` // accepted in trickle requests (acked)
	Checks     int `json:"checks"`   // STUN binding requests received on the probe's sockets
	Sockets    int `json:"sockets"`
}

// CandidateFlood negotiates one PeerConnection on plugin, then trickles n host candidates that
// point at n UDP sockets of the probe's on ip, in one trickle request, and counts the STUN binding
// requests the server sends to them during window.
func CandidateFlood(ctx context.Context, base, plugin, ip string, n int, window time.Duration) (FloodResult, error) {
	r := FloodResult{Candidates: n}
	offer, err := RealOffer()
	if err != nil {
		return r, err
	}
	o, sid, hid, err := SendOffer(ctx, base, plugin, `{"audio":true,"video":true}`, offer, 15*time.Second)
	if err != nil {
		return r, err
	}
	defer httpPost(context.Background(), fmt.Sprintf("%s/%d", base, sid), `{"janus":"destroy","transaction":"d"}`)
	if !o.Answered {
		return r, fmt.Errorf("offer not answered: %s", o.Error)
	}
	var checks atomic.Int64
	conns := make([]net.PacketConn, 0, n)
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	cands := make([]string, 0, n)
	for i := range n {
		c, err := net.ListenPacket("udp4", ip+":0")
		if err != nil {
			break
		}
		conns = append(conns, c)
		port := c.LocalAddr().(*net.UDPAddr).Port
		cands = append(cands, fmt.Sprintf(`{"candidate":"candidate:%d 1 udp %d %s %d typ host","sdpMid":"0","sdpMLineIndex":0}`,
			i, 2130706431-i, ip, port))
		go countSTUN(c, &checks)
	}
	r.Sockets = len(conns)
	// All in one trickle, as an attacker would; a server that refuses so many in one request gets
	// them in trickles of floodBatch, so that what bounds the checks is its cap per PeerConnection.
	batch := len(cands)
	for len(cands) > 0 {
		n := min(batch, len(cands))
		_, m, err := httpPost(ctx, fmt.Sprintf("%s/%d/%d", base, sid, hid),
			`{"janus":"trickle","transaction":"t","candidates":[`+strings.Join(cands[:n], ",")+`]}`)
		if err != nil {
			return r, err
		}
		switch {
		case m["janus"] == "ack":
			r.Trickled += n
		case batch > floodBatch:
			batch = floodBatch
			continue
		}
		cands = cands[n:]
	}
	select {
	case <-ctx.Done():
	case <-time.After(window):
	}
	r.Checks = int(checks.Load())
	return r, nil
}

// floodBatch: candidates per trickle when a server refuses the flood in one.
const floodBatch = 50

// countSTUN counts STUN binding requests (type 0x0001, magic cookie) arriving on c.
func countSTUN(c net.PacketConn, n *atomic.Int64) {
	buf := make([]byte, 1500)
	for {
		k, _, err := c.ReadFrom(buf)
		if err != nil {
			return
		}
		if k >= 20 && buf[0] == 0 && buf[1] == 1 && buf[4] == 0x21 && buf[5] == 0x12 && buf[6] == 0xA4 && buf[7] == 0x42 {
			n.Add(1)
		}
	}
}

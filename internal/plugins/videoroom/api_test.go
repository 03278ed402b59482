package videoroom_test

import (
	"encoding/base64"
	"net"
	"testing"
	"time"

	"github.com/pion/rtp"
	"github.com/pion/srtp/v3"
	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/internal/config"
	"github.com/strata-rtc/strata/internal/janusclient"
	"github.com/strata-rtc/strata/internal/plugins/videoroom"
)

func TestRoomManagement(t *testing.T) {
	c := startServer(t, nil)
	h := attach(t, c)
	// The default configuration has Janus's demo rooms.
	data, _ := mustRequest(t, h, map[string]any{"request": "exists", "room": 1234}, nil)
	if data["exists"] != true {
		t.Fatalf("room 1234 missing: %v", data)
	}
	data, _ = mustRequest(t, h, map[string]any{"request": "list"}, nil)
	rooms := map[float64]map[string]any{}
	for _, r := range data["list"].([]any) {
		m := r.(map[string]any)
		rooms[m["room"].(float64)] = m
	}
	if r := rooms[1234]; r == nil || r["description"] != "Demo Room" || r["max_publishers"] != 6.0 || r["bitrate"] != 128000.0 || r["fir_freq"] != 10.0 {
		t.Fatalf("room 1234: %v", rooms[1234])
	}
	if r := rooms[5678]; r == nil || r["videocodec"] != "vp9" || r["bitrate"] != 512000.0 {
		t.Fatalf("room 5678: %v", rooms[5678])
	}
	data, _ = mustRequest(t, h, map[string]any{"request": "create", "room": 4321, "description": "probe", "publishers": 2, "secret": "s3", "is_private": true}, nil)
	if data["videoroom"] != "created" || data["room"] != 4321.0 || data["permanent"] != false {
		t.Fatalf("create: %v", data)
	}
	_, _, err := request(t, h, map[string]any{"request": "create", "room": 4321}, nil)
	wantCode(t, err, videoroom.ErrRoomExists)
	// Private rooms are not listed.
	data, _ = mustRequest(t, h, map[string]any{"request": "list"}, nil)
	for _, r := range data["list"].([]any) {
		if r.(map[string]any)["room"] == 4321.0 {
			t.Fatal("private room listed")
		}
	}
	_, _, err = request(t, h, map[string]any{"request": "edit", "room": 4321, "secret": "wrong", "new_description": "x"}, nil)
	wantCode(t, err, videoroom.ErrUnauthorized)
	_, _, err = request(t, h, map[string]any{"request": "edit", "room": 4321, "new_description": "x"}, nil)
	wantCode(t, err, videoroom.ErrMissingElement)
	data, _ = mustRequest(t, h, map[string]any{"request": "edit", "room": 4321, "secret": "s3", "new_description": "renamed", "new_is_private": false}, nil)
	if data["videoroom"] != "edited" {
		t.Fatalf("edit: %v", data)
	}
	data, _ = mustRequest(t, h, map[string]any{"request": "allowed", "room": 4321, "secret": "s3", "action": "add", "allowed": []string{"tok"}}, nil)
	if a, _ := data["allowed"].([]any); len(a) != 1 || a[0] != "tok" {
		t.Fatalf("allowed: %v", data)
	}
	mustRequest(t, h, map[string]any{"request": "allowed", "room": 4321, "secret": "s3", "action": "enable"}, nil)
	j := attach(t, c)
	_, _, err = request(t, j, map[string]any{"request": "join", "ptype": "publisher", "room": 4321, "token": "nope"}, nil)
	wantCode(t, err, videoroom.ErrUnauthorized)
	joined, _ := mustRequest(t, j, map[string]any{"request": "join", "ptype": "publisher", "room": 4321, "token": "tok", "display": "ann"}, nil)
	if joined["videoroom"] != "joined" || joined["description"] != "renamed" || joined["private_id"] == nil {
		t.Fatalf("joined: %v", joined)
	}
	data, _ = mustRequest(t, h, map[string]any{"request": "listparticipants", "room": 4321}, nil)
	ps := data["participants"].([]any)
	if len(ps) != 1 || ps[0].(map[string]any)["display"] != "ann" || ps[0].(map[string]any)["publisher"] != false {
		t.Fatalf("participants: %v", data)
	}
	data, _ = mustRequest(t, h, map[string]any{"request": "enable_recording", "room": 4321, "secret": "s3", "record": true}, nil)
	if data["record"] != true {
		t.Fatalf("enable_recording: %v", data)
	}
	data, _ = mustRequest(t, h, map[string]any{"request": "kick", "room": 4321, "secret": "s3", "id": joined["id"]}, nil)
	if data["videoroom"] != "success" {
		t.Fatalf("kick: %v", data)
	}
	waitEvent(t, j, func(d map[string]any) bool { return d["leaving"] == "ok" && d["reason"] == "kicked" })
	data, _ = mustRequest(t, h, map[string]any{"request": "destroy", "room": 4321, "secret": "s3"}, nil)
	if data["videoroom"] != "destroyed" {
		t.Fatalf("destroy: %v", data)
	}
	data, _ = mustRequest(t, h, map[string]any{"request": "exists", "room": 4321}, nil)
	if data["exists"] != false {
		t.Fatal("destroyed room still exists")
	}
}

func TestBadRequestsGetVideoRoomErrors(t *testing.T) {
	c := startServer(t, func(cfg *config.Config) {
		cfg.Plugins.VideoRoom.AdminKey = "key"
		cfg.Plugins.VideoRoom.Rooms[0].Secret = "room-secret" // room 1234
	})
	h := attach(t, c)
	cases := []struct {
		name string
		body map[string]any
		code int
	}{
		{"unknown request", map[string]any{"request": "bogus"}, videoroom.ErrInvalidRequest},
		{"no request", map[string]any{"room": 1}, videoroom.ErrMissingElement},
		{"join a missing room", map[string]any{"request": "join", "ptype": "publisher", "room": 999}, videoroom.ErrNoSuchRoom},
		{"room of the wrong type", map[string]any{"request": "exists", "room": "1234"}, videoroom.ErrInvalidElement},
		{"missing room", map[string]any{"request": "listparticipants"}, videoroom.ErrMissingElement},
		{"create without the admin key", map[string]any{"request": "create", "room": 77}, videoroom.ErrMissingElement},
		{"create with a wrong admin key", map[string]any{"request": "create", "room": 77, "admin_key": "x"}, videoroom.ErrUnauthorized},
		{"configure before joining", map[string]any{"request": "configure"}, videoroom.ErrJoinFirst},
		{"bad ptype", map[string]any{"request": "join", "ptype": "viewer", "room": 1234}, videoroom.ErrInvalidElement},
		{"subscribe to a missing feed", map[string]any{"request": "join", "ptype": "subscriber", "room": 1234, "streams": []map[string]any{{"feed": 42}}}, videoroom.ErrNoSuchFeed},
		{"subscribe without streams", map[string]any{"request": "join", "ptype": "subscriber", "room": 1234}, videoroom.ErrMissingElement},
		{"destroy with a wrong secret", map[string]any{"request": "destroy", "room": 1234, "secret": "no"}, videoroom.ErrUnauthorized},
		{"kick a stranger", map[string]any{"request": "kick", "room": 1234, "secret": "room-secret", "id": 5}, videoroom.ErrNoSuchFeed},
		{"forward a missing publisher", map[string]any{"request": "rtp_forward", "room": 1234, "secret": "room-secret", "publisher_id": 5, "host": "127.0.0.1", "streams": []any{}}, videoroom.ErrNoSuchFeed},
	}
	for _, tc := range cases {
		_, _, err := request(t, h, tc.body, nil)
		if err == nil {
			t.Errorf("%s: no error", tc.name)
			continue
		}
		if got := codeOf(err); got != tc.code {
			t.Errorf("%s: error %v, want code %d", tc.name, err, tc.code)
		}
	}
	// A room that requires private ids refuses subscriptions without a valid one.
	mustRequest(t, h, map[string]any{"request": "create", "room": 88, "admin_key": "key", "require_pvtid": true}, nil)
	pub := attach(t, c)
	joined, _ := mustRequest(t, pub, map[string]any{"request": "join", "ptype": "publisher", "room": 88, "id": 7}, nil)
	_, _, err := request(t, attach(t, c), map[string]any{"request": "join", "ptype": "subscriber", "room": 88, "private_id": 12345, "streams": []map[string]any{{"feed": 7}}}, nil)
	wantCode(t, err, videoroom.ErrUnauthorized)
	// A taken id, joining twice, unpublishing what was never published, publishing without an offer.
	_, _, err = request(t, attach(t, c), map[string]any{"request": "join", "ptype": "publisher", "room": 88, "id": 7}, nil)
	wantCode(t, err, videoroom.ErrIDExists)
	_, _, err = request(t, pub, map[string]any{"request": "join", "ptype": "publisher", "room": 88}, nil)
	wantCode(t, err, videoroom.ErrAlreadyJoined)
	_, _, err = request(t, pub, map[string]any{"request": "unpublish"}, nil)
	wantCode(t, err, videoroom.ErrNotPublished)
	_, _, err = request(t, pub, map[string]any{"request": "publish"}, nil)
	wantCode(t, err, videoroom.ErrMissingElement)
	_ = joined
}

func TestPublishersLimitAndEvents(t *testing.T) {
	c := startServer(t, nil)
	admin := attach(t, c)
	mustRequest(t, admin, map[string]any{"request": "create", "room": 55, "publishers": 1}, nil)
	watcher := attach(t, c)
	mustRequest(t, watcher, map[string]any{"request": "join", "ptype": "publisher", "room": 55, "display": "watcher"}, nil)
	pub := startPublisher(t, c, 55, "one")
	waitEvent(t, watcher, func(d map[string]any) bool { ps, ok := d["publishers"].([]any); return ok && len(ps) == 1 })
	// The room is full now: a second publication is refused with 432.
	second := attach(t, c)
	mustRequest(t, second, map[string]any{"request": "join", "ptype": "publisher", "room": 55}, nil)
	pc, err := clientAPI(t, nil).NewPeerConnection(webrtc.Configuration{})
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	if _, err := pc.AddTransceiverFromKind(webrtc.RTPCodecTypeVideo, webrtc.RTPTransceiverInit{Direction: webrtc.RTPTransceiverDirectionSendonly}); err != nil {
		t.Fatal(err)
	}
	offer, _ := pc.CreateOffer(nil)
	_, _, err = request(t, second, map[string]any{"request": "publish"}, completeLocal(t, pc, offer))
	wantCode(t, err, videoroom.ErrPublishersFull)
	// Moderation is announced to the room, the moderated participant included (as Janus does).
	mid := pub.pc.GetTransceivers()[0].Mid()
	mustRequest(t, admin, map[string]any{"request": "moderate", "room": 55, "id": pub.id, "mid": mid, "mute": true}, nil)
	for _, h := range []*janusclient.Handle{watcher, pub.h} {
		waitEvent(t, h, func(d map[string]any) bool {
			return d["moderation"] == "muted" && d["id"] == float64(pub.id) && d["mid"] == mid && d["room"] == 55.0
		})
	}
	// Leaving is announced: unpublished, then leaving.
	mustRequest(t, pub.h, map[string]any{"request": "leave"}, nil)
	waitEvent(t, watcher, func(d map[string]any) bool { return d["unpublished"] == float64(pub.id) })
	waitEvent(t, watcher, func(d map[string]any) bool { return d["leaving"] == float64(pub.id) })
}

// TestRTPForwarding forwards each simulcast layer as plain RTP to local UDP ports.
func TestRTPForwarding(t *testing.T) {
	c := startServer(t, nil)
	admin := attach(t, c)
	mustRequest(t, admin, map[string]any{"request": "create", "room": 66, "secret": "s"}, nil)
	pub := startPublisher(t, c, 66, "fwd")
	waitActive(t, admin, 66, pub.id)
	var conns []*net.UDPConn
	var ports []int
	for range 2 {
		conn, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		conns = append(conns, conn)
		ports = append(ports, conn.LocalAddr().(*net.UDPAddr).Port)
	}
	data, _ := mustRequest(t, admin, map[string]any{"request": "rtp_forward", "room": 66, "secret": "s", "publisher_id": pub.id, "host": "127.0.0.1",
		"streams": []map[string]any{{"mid": "0", "port": ports[0], "ssrc": 1234, "pt": 100, "port_3": ports[1]}}}, nil)
	fwds, _ := data["forwarders"].([]any)
	if data["videoroom"] != "rtp_forward" || len(fwds) != 2 {
		t.Fatalf("rtp_forward: %v", data)
	}
	// port gets the base layer with the SSRC and payload type asked for; port_3 the top layer.
	for i, conn := range conns {
		_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		buf := make([]byte, 1500)
		n, err := conn.Read(buf)
		if err != nil {
			t.Fatalf("forwarder %d: %v", i, err)
		}
		var p rtp.Packet
		if err := p.Unmarshal(buf[:n]); err != nil {
			t.Fatalf("forwarder %d sent no RTP: %v", i, err)
		}
		if i == 0 && (p.SSRC != 1234 || p.PayloadType != 100) {
			t.Fatalf("forwarded ssrc %d pt %d, want 1234 and 100", p.SSRC, p.PayloadType)
		}
	}
	data, _ = mustRequest(t, admin, map[string]any{"request": "listforwarders", "room": 66, "secret": "s"}, nil)
	if ps, _ := data["publishers"].([]any); len(ps) != 1 {
		t.Fatalf("listforwarders: %v", data)
	}
	id := fwds[0].(map[string]any)["stream_id"]
	data, _ = mustRequest(t, admin, map[string]any{"request": "stop_rtp_forward", "room": 66, "secret": "s", "publisher_id": pub.id, "stream_id": id}, nil)
	if data["videoroom"] != "stop_rtp_forward" {
		t.Fatalf("stop_rtp_forward: %v", data)
	}
}

// TestSRTPForwarding: with srtp_suite and srtp_crypto the forwarded stream is SRTP that decrypts
// with that key; a malformed key is refused with 456 and forwards nothing.
func TestSRTPForwarding(t *testing.T) {
	c := startServer(t, nil)
	admin := attach(t, c)
	mustRequest(t, admin, map[string]any{"request": "create", "room": 67, "secret": "s"}, nil)
	pub := startPublisher(t, c, 67, "srtp")
	waitActive(t, admin, 67, pub.id)
	conn, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	port := conn.LocalAddr().(*net.UDPAddr).Port
	crypto := base64.StdEncoding.EncodeToString([]byte("0123456789abcdefSALTSALTSALT12"))
	forward := func(suite int, crypto string) (map[string]any, error) {
		data, _, err := request(t, admin, map[string]any{"request": "rtp_forward", "room": 67, "secret": "s", "publisher_id": pub.id,
			"host": "127.0.0.1", "srtp_suite": suite, "srtp_crypto": crypto, "streams": []map[string]any{{"mid": "0", "port": port}}}, nil)
		return data, err
	}
	_, err = forward(80, "bad key")
	wantCode(t, err, videoroom.ErrInvalidElement)
	_, err = forward(64, crypto)
	wantCode(t, err, videoroom.ErrInvalidElement)
	data, err := forward(80, crypto)
	if err != nil {
		t.Fatal(err)
	}
	if fwds, _ := data["forwarders"].([]any); len(fwds) != 1 || fwds[0].(map[string]any)["srtp"] != true {
		t.Fatalf("rtp_forward: %v", data)
	}
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 1500)
	n, err := conn.Read(buf)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := base64.StdEncoding.DecodeString(crypto)
	dec, err := srtp.CreateContext(raw[:16], raw[16:], srtp.ProtectionProfileAes128CmHmacSha1_80)
	if err != nil {
		t.Fatal(err)
	}
	plain, err := dec.DecryptRTP(nil, buf[:n], nil)
	if err != nil {
		t.Fatalf("the forwarded packet does not decrypt with the key: %v", err)
	}
	var p rtp.Packet
	if err := p.Unmarshal(plain); err != nil || len(p.Payload) == 0 {
		t.Fatalf("decrypted %d bytes that are no RTP packet: %v", len(plain), err)
	}
}

package sfu

import (
	"encoding/base64"
	"net"
	"testing"
	"time"

	"github.com/pion/rtp"
	"github.com/pion/srtp/v3"

	"github.com/strata-rtc/strata/internal/media"
)

// testSRTPCrypto is a 30-byte master key and salt, base64, as Janus's srtp_crypto takes it.
var testSRTPCrypto = base64.StdEncoding.EncodeToString([]byte("0123456789abcdefSALTSALTSALT12"))

func listenUDP(t *testing.T) *net.UDPConn {
	t.Helper()
	c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func readUDP(t *testing.T, c *net.UDPConn) []byte {
	t.Helper()
	buf := make([]byte, 2000)
	_ = c.SetReadDeadline(time.Now().Add(2 * time.Second))
	n, err := c.Read(buf)
	if err != nil {
		t.Fatalf("nothing forwarded: %v", err)
	}
	return buf[:n]
}

// TestForwarderRelaysItsLayer: a forwarder relays the packets of its layer only, with the SSRC and
// payload type it was given, and stops when removed from the receiver.
func TestForwarderRelaysItsLayer(t *testing.T) {
	dst := listenUDP(t)
	recv := NewReceiver(ReceiverConfig{Codec: media.CodecVP8, Simulcast: true}, nil)
	f, err := NewForwarder(dst.LocalAddr().(*net.UDPAddr), ForwarderConfig{Layer: 1, SSRC: 0xabcdef, PayloadType: 100})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recv.AddSink(f)
	src := newVP8Source()
	frame := src.nextFrame()
	for l, pkts := range frame {
		recv.WriteRTP(l, pkts[0], time.Second)
	}
	var got rtp.Packet
	if err := got.Unmarshal(readUDP(t, dst)); err != nil {
		t.Fatal(err)
	}
	var in rtp.Packet
	_ = in.Unmarshal(frame[1][0])
	if got.SSRC != 0xabcdef || got.PayloadType != 100 || got.SequenceNumber != in.SequenceNumber || string(got.Payload) != string(in.Payload) {
		t.Fatalf("forwarded %v, want layer 1's packet %v with SSRC abcdef and payload type 100", got.Header, in.Header)
	}
	if st := f.Stats(); st.Packets != 1 {
		t.Fatalf("forwarded %d packets, want layer 1's only", st.Packets)
	}
	recv.RemoveSink(f)
	recv.WriteRTP(1, frame[1][1], time.Second)
	if st := f.Stats(); st.Packets != 1 {
		t.Fatal("a removed forwarder kept forwarding")
	}
}

// TestForwarderEncryptsWithSRTP: what an SRTP forwarder sends decrypts, with the same key, into
// the publisher's packet.
func TestForwarderEncryptsWithSRTP(t *testing.T) {
	dst := listenUDP(t)
	key, err := ParseSRTPKey(32, testSRTPCrypto)
	if err != nil {
		t.Fatal(err)
	}
	recv := NewReceiver(ReceiverConfig{Codec: media.CodecOpus, Extensions: ExtIDs{AudioLevel: 1}}, nil)
	f, err := NewForwarder(dst.LocalAddr().(*net.UDPAddr), ForwarderConfig{SRTP: key})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recv.AddSink(f)
	in := opusWithLevel(t, 42, 30)
	recv.WriteRTP(0, in, time.Second)
	wire := readUDP(t, dst)
	if string(wire[12:len(in)]) == string(in[12:]) {
		t.Fatal("the payload went out in the clear")
	}
	dec, err := srtp.CreateContext(key.MasterKey, key.Salt, key.Profile)
	if err != nil {
		t.Fatal(err)
	}
	plain, err := dec.DecryptRTP(nil, wire, nil)
	if err != nil {
		t.Fatalf("decrypting: %v", err)
	}
	if string(plain) != string(in) {
		t.Fatalf("decrypted %x, want %x", plain, in)
	}
}

func TestParseSRTPKey(t *testing.T) {
	if k, err := ParseSRTPKey(80, testSRTPCrypto); err != nil || k.Profile != srtp.ProtectionProfileAes128CmHmacSha1_80 || len(k.MasterKey) != 16 || len(k.Salt) != 14 {
		t.Fatalf("valid key: %+v %v", k, err)
	}
	for _, c := range []struct {
		suite  int
		crypto string
	}{
		{64, testSRTPCrypto},
		{32, "not base64!"},
		{32, base64.StdEncoding.EncodeToString([]byte("too short"))},
	} {
		if _, err := ParseSRTPKey(c.suite, c.crypto); err == nil {
			t.Errorf("ParseSRTPKey(%d, %q) accepted", c.suite, c.crypto)
		}
	}
}

// FuzzParseSRTPKey: an API's srtp_suite and srtp_crypto either make a key of the suite's sizes or
// an error; nothing panics.
func FuzzParseSRTPKey(f *testing.F) {
	f.Add(80, testSRTPCrypto)
	f.Add(32, "=")
	f.Fuzz(func(t *testing.T, suite int, crypto string) {
		k, err := ParseSRTPKey(suite, crypto)
		if err != nil {
			return
		}
		keyLen, _ := k.Profile.KeyLen()
		saltLen, _ := k.Profile.SaltLen()
		if len(k.MasterKey) != keyLen || len(k.Salt) != saltLen {
			t.Fatalf("key %d and salt %d bytes for %v", len(k.MasterKey), len(k.Salt), k.Profile)
		}
	})
}

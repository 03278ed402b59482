package sfu

import (
	"encoding/base64"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"

	"github.com/pion/rtp"
	"github.com/pion/srtp/v3"

	"github.com/strata-rtc/strata/internal/media"
)

// ForwarderConfig describes an RTP forwarder.
type ForwarderConfig struct {
	// Layer is the receiver layer relayed (a simulcast substream; 0 for a single stream).
	Layer int
	// SSRC and PayloadType replace the publisher's in what is sent; 0 keeps them.
	SSRC        uint32
	PayloadType uint8
	// SRTP, when set, encrypts what is sent.
	SRTP *SRTPKey
}

// SRTPKey is an SRTP master key and salt with its crypto suite, as Janus's rtp_forward takes them.
type SRTPKey struct {
	Profile   srtp.ProtectionProfile
	MasterKey []byte
	Salt      []byte
}

// ParseSRTPKey reads Janus's srtp_suite (32 or 80: AES_CM_128_HMAC_SHA1_32 or _80) and
// srtp_crypto (the base64 master key and salt, 30 bytes).
func ParseSRTPKey(suite int, crypto string) (*SRTPKey, error) {
	k := &SRTPKey{}
	switch suite {
	case 32:
		k.Profile = srtp.ProtectionProfileAes128CmHmacSha1_32
	case 80:
		k.Profile = srtp.ProtectionProfileAes128CmHmacSha1_80
	default:
		return nil, fmt.Errorf("invalid SRTP suite %d (32 or 80)", suite)
	}
	raw, err := base64.StdEncoding.DecodeString(crypto)
	if err != nil {
		return nil, fmt.Errorf("invalid SRTP crypto: %v", err)
	}
	keyLen, _ := k.Profile.KeyLen()
	saltLen, _ := k.Profile.SaltLen()
	if len(raw) != keyLen+saltLen {
		return nil, fmt.Errorf("invalid SRTP crypto: %d bytes, want %d (key and salt)", len(raw), keyLen+saltLen)
	}
	k.MasterKey, k.Salt = raw[:keyLen], raw[keyLen:]
	return k, nil
}

// ForwarderStats counts what a forwarder sent.
type ForwarderStats struct {
	Packets, Bytes, Errors uint64
}

// Forwarder is a Sink that relays one layer of a track as plain RTP, or SRTP, to a UDP address:
// Janus's rtp_forward, which feeds streaming mountpoints, media servers and recorders elsewhere.
type Forwarder struct {
	cfg  ForwarderConfig
	conn *net.UDPConn
	dst  netip.AddrPort // the destination on a shared socket (NewForwarderFrom); invalid: conn is connected
	ctx  *srtp.Context

	// Used by the layer's goroutine only (the forwarder takes one layer).
	hdr    rtp.Header
	ext    [8]rtp.Extension
	plain  [media.SlotSize]byte
	cipher [media.SlotSize + 32]byte

	closeOnce                sync.Once
	closed                   atomic.Bool
	packets, bytes, failures atomic.Uint64
}

// NewForwarder opens the socket towards addr.
func NewForwarder(addr *net.UDPAddr, cfg ForwarderConfig) (*Forwarder, error) {
	f, err := newForwarder(cfg)
	if err != nil {
		return nil, err
	}
	conn, err := net.DialUDP("udp", nil, addr)
	if err != nil {
		return nil, err
	}
	f.conn = conn
	return f, nil
}

// NewForwarderFrom sends to addr from conn, a socket the caller owns and also reads: symmetric
// RTP, where a plain-RTP peer expects media from the port it sends to. Close leaves conn open.
func NewForwarderFrom(conn *net.UDPConn, addr *net.UDPAddr, cfg ForwarderConfig) (*Forwarder, error) {
	f, err := newForwarder(cfg)
	if err != nil {
		return nil, err
	}
	f.conn, f.dst = conn, addr.AddrPort()
	return f, nil
}

func newForwarder(cfg ForwarderConfig) (*Forwarder, error) {
	f := &Forwarder{cfg: cfg}
	if cfg.SRTP != nil {
		ctx, err := srtp.CreateContext(cfg.SRTP.MasterKey, cfg.SRTP.Salt, cfg.SRTP.Profile)
		if err != nil {
			return nil, fmt.Errorf("SRTP context: %w", err)
		}
		f.ctx = ctx
	}
	return f, nil
}

// Config returns the forwarder's configuration.
func (f *Forwarder) Config() ForwarderConfig { return f.cfg }

// WriteRTP implements Sink: a packet of the forwarded layer is relayed with its SSRC and payload
// type replaced as configured, encrypted when SRTP is on.
func (f *Forwarder) WriteRTP(p *Packet) {
	if p.Layer != f.cfg.Layer || len(p.Bytes) > len(f.plain) || f.closed.Load() {
		return
	}
	b := f.plain[:copy(f.plain[:], p.Bytes)]
	if f.cfg.SSRC != 0 {
		media.SetSSRC(b, f.cfg.SSRC)
	}
	if f.cfg.PayloadType != 0 {
		media.SetPayloadType(b, f.cfg.PayloadType)
	}
	if f.ctx != nil {
		f.hdr.Extensions, f.hdr.CSRC = f.ext[:0], f.hdr.CSRC[:0]
		out, err := f.ctx.EncryptRTP(f.cipher[:0], b, &f.hdr)
		if err != nil {
			f.failures.Add(1)
			return
		}
		b = out
	}
	if err := f.send(b); err != nil {
		f.failures.Add(1)
		return
	}
	f.packets.Add(1)
	f.bytes.Add(uint64(len(b)))
}

func (f *Forwarder) send(b []byte) error {
	var err error
	if f.dst.IsValid() {
		_, err = f.conn.WriteToUDPAddrPort(b, f.dst)
	} else {
		_, err = f.conn.Write(b)
	}
	return err
}

// Resync implements Sink: the receiver of a forwarded stream sees the publisher's numbering as it
// is, gaps included, as Janus forwards it.
func (f *Forwarder) Resync() {}

// Close closes the socket; take the forwarder off its receiver first.
func (f *Forwarder) Close() error {
	var err error
	f.closeOnce.Do(func() {
		f.closed.Store(true)
		if !f.dst.IsValid() {
			err = f.conn.Close()
		}
	})
	return err
}

// Stats returns the counters.
func (f *Forwarder) Stats() ForwarderStats {
	return ForwarderStats{Packets: f.packets.Load(), Bytes: f.bytes.Load(), Errors: f.failures.Load()}
}

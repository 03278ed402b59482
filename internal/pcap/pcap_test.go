package pcap

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

// captured is one packet as gopacket reads it back.
type captured struct {
	incoming bool
	payload  []byte
	orig     int
}

// ReadFile reads a capture with gopacket's pcapgo reader and its Ethernet, IPv4 and UDP decoders
// (a reader written independently of this package), checking the dummy headers on the way.
func readFile(t *testing.T, path string) []captured {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := pcapgo.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	if r.LinkType() != layers.LinkTypeEthernet {
		t.Fatalf("link type %v", r.LinkType())
	}
	var out []captured
	for {
		data, ci, err := r.ReadPacketData()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		pkt := gopacket.NewPacket(data, layers.LayerTypeEthernet, gopacket.Default)
		ip, _ := pkt.Layer(layers.LayerTypeIPv4).(*layers.IPv4)
		udp, _ := pkt.Layer(layers.LayerTypeUDP).(*layers.UDP)
		if ip == nil || udp == nil {
			t.Fatalf("packet %d does not decode as Ethernet/IPv4/UDP: %v", len(out), pkt)
		}
		in := ip.SrcIP.Equal(PeerIP[:]) && ip.DstIP.Equal(StrataIP[:]) && udp.SrcPort == PeerPort && udp.DstPort == StrataPort
		outgoing := ip.SrcIP.Equal(StrataIP[:]) && ip.DstIP.Equal(PeerIP[:]) && udp.SrcPort == StrataPort && udp.DstPort == PeerPort
		if !in && !outgoing {
			t.Fatalf("packet %d: %v:%d -> %v:%d", len(out), ip.SrcIP, udp.SrcPort, ip.DstIP, udp.DstPort)
		}
		if int(udp.Length) != 8+ci.Length-HeaderLen || int(ip.Length) != 28+ci.Length-HeaderLen {
			t.Fatalf("packet %d: lengths ip %d udp %d for an original of %d", len(out), ip.Length, udp.Length, ci.Length)
		}
		// The IPv4 checksum is valid: recomputing it over the header gives 0.
		if checksum(data[14:34]) != 0 {
			t.Fatalf("packet %d: bad IPv4 header checksum", len(out))
		}
		out = append(out, captured{incoming: in, payload: udp.Payload, orig: ci.Length - HeaderLen})
	}
}

func TestCaptureReadBack(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.pcap")
	c, err := Create(path, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	a := bytes.Repeat([]byte{0x80, 1, 2, 3}, 50)
	b := []byte{0x81, 0xc8, 0, 6}
	c.Packet(true, a)
	c.PacketParts(false, b[:2], b[2:], nil)
	c.Packet(false, nil) // nothing
	big := bytes.Repeat([]byte{9}, SlotSize+100)
	c.Packet(true, big)
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	c.Packet(true, a) // after Close: ignored
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	got := readFile(t, path)
	if len(got) != 3 || c.Written() != 3 || c.Dropped() != 0 {
		t.Fatalf("%d packets read, %d written, %d dropped; want 3, 3, 0", len(got), c.Written(), c.Dropped())
	}
	if !got[0].incoming || !bytes.Equal(got[0].payload, a) || got[1].incoming || !bytes.Equal(got[1].payload, b) {
		t.Errorf("packets read back differ: %+v", got[:2])
	}
	if got[2].orig != len(big) || len(got[2].payload) != SlotSize {
		t.Errorf("a packet over the slot: original %d, kept %d", got[2].orig, len(got[2].payload))
	}
}

func TestCaptureTruncate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.pcap")
	c, err := Create(path, 12, 0)
	if err != nil {
		t.Fatal(err)
	}
	p := bytes.Repeat([]byte{0x80}, 100)
	c.PacketParts(true, p[:8], p[8:])
	c.Close()
	got := readFile(t, path)
	if len(got) != 1 || len(got[0].payload) != 12 || got[0].orig != 100 {
		t.Fatalf("truncate 12: %+v", got)
	}
}

func TestCreateRefuses(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "x.pcap")
	if err := os.WriteFile(path, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Create(path, 0, 0); err == nil {
		t.Error("an existing file was opened")
	}
	if b, _ := os.ReadFile(path); string(b) != "keep" {
		t.Error("the existing file was changed")
	}
	if _, err := Create(filepath.Join(dir, "y.pcap"), -1, 0); err == nil {
		t.Error("negative truncate accepted")
	}
	if _, err := Create(filepath.Join(dir, "missing", "z.pcap"), 0, 0); err == nil {
		t.Error("a file in a missing directory was created")
	}
}

// TestCaptureDropsWhenFull: with every slot taken, packets are dropped and counted, never waited for.
func TestCaptureDropsWhenFull(t *testing.T) {
	c, err := Create(filepath.Join(t.TempDir(), "d.pcap"), 0, 4)
	if err != nil {
		t.Fatal(err)
	}
	// Take the writer's slots away so that none is free.
	var held []*slot
	for len(held) < 4 {
		held = append(held, <-c.free)
	}
	for range 10 {
		c.Packet(true, []byte{1, 2, 3})
	}
	if c.Dropped() != 10 {
		t.Errorf("dropped %d, want 10", c.Dropped())
	}
	for _, s := range held {
		c.free <- s
	}
	c.Packet(true, []byte{1, 2, 3})
	c.Close()
	if c.Written() != 1 {
		t.Errorf("written %d, want 1", c.Written())
	}
}

func TestPacketAllocatesNothing(t *testing.T) {
	c, err := Create(filepath.Join(t.TempDir(), "a.pcap"), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	h, p := make([]byte, 12), make([]byte, 1000)
	if n := testing.AllocsPerRun(200, func() { c.PacketParts(false, h, p, nil) }); n != 0 {
		t.Errorf("PacketParts allocates %.1f times per packet", n)
	}
}

func BenchmarkPacket(b *testing.B) {
	c, err := Create(filepath.Join(b.TempDir(), "b.pcap"), 0, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	p := make([]byte, 1200)
	b.ReportAllocs()
	for b.Loop() {
		c.Packet(true, p)
	}
}

package udpbatch

import (
	"bytes"
	"encoding/binary"
	"net"
	"net/netip"
	"sync"
	"testing"
	"time"
)

func listen(t testing.TB, network, addr string) *net.UDPConn {
	t.Helper()
	c, err := net.ListenUDP(network, net.UDPAddrFromAddrPort(netip.MustParseAddrPort(addr)))
	if err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadBuffer(4 << 20)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func newConn(t testing.TB, network, addr string) *Conn {
	t.Helper()
	c, err := New(listen(t, network, addr))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// readN reads n datagrams and returns their payloads in arrival order.
func readN(t *testing.T, c *net.UDPConn, n int) [][]byte {
	t.Helper()
	var got [][]byte
	buf := make([]byte, 4096)
	for len(got) < n {
		_ = c.SetReadDeadline(time.Now().Add(2 * time.Second))
		k, _, err := c.ReadFromUDPAddrPort(buf)
		if err != nil {
			t.Fatalf("after %d of %d datagrams: %v", len(got), n, err)
		}
		got = append(got, append([]byte(nil), buf[:k]...))
	}
	return got
}

func packet(i, size int) []byte {
	p := make([]byte, size)
	binary.BigEndian.PutUint32(p, uint32(i))
	for j := 4; j < size; j++ {
		p[j] = byte(i + j)
	}
	return p
}

func addrOf(c *net.UDPConn) netip.AddrPort {
	return c.LocalAddr().(*net.UDPAddr).AddrPort()
}

func TestHeldWritesLeaveTogetherInOrder(t *testing.T) {
	for _, tc := range []struct{ name, network, addr string }{
		{"ipv4", "udp4", "127.0.0.1:0"},
		{"ipv6", "udp6", "[::1]:0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dst := listen(t, tc.network, tc.addr)
			c := newConn(t, tc.network, tc.addr)
			const n = 20
			c.Hold()
			for i := range n {
				if k, err := c.WriteToAddrPort(packet(i, 100+i), addrOf(dst)); err != nil || k != 100+i {
					t.Fatalf("write %d: %d, %v", i, k, err)
				}
			}
			if s := c.Stats(); s.Batched != 0 || s.Calls != 0 {
				t.Fatalf("sent before Release: %+v", s)
			}
			c.Release()
			got := readN(t, dst, n)
			for i, p := range got {
				if !bytes.Equal(p, packet(i, 100+i)) {
					t.Fatalf("datagram %d differs: got %d bytes starting %x", i, len(p), p[:4])
				}
			}
			if s := c.Stats(); s.Batched != n || s.Calls != 1 || s.Direct != 0 || s.Errors != 0 {
				t.Fatalf("stats %+v, want %d batched in 1 call", s, n)
			}
		})
	}
}

func TestWritesOutsideAHoldAreDirect(t *testing.T) {
	dst := listen(t, "udp4", "127.0.0.1:0")
	c := newConn(t, "udp4", "127.0.0.1:0")
	if _, err := c.WriteToAddrPort(packet(7, 60), addrOf(dst)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.WriteTo(packet(8, 60), dst.LocalAddr()); err != nil {
		t.Fatal(err)
	}
	got := readN(t, dst, 2)
	if !bytes.Equal(got[0], packet(7, 60)) || !bytes.Equal(got[1], packet(8, 60)) {
		t.Fatal("payloads differ")
	}
	if s := c.Stats(); s.Direct != 2 || s.Batched != 0 {
		t.Fatalf("stats %+v", s)
	}
}

func TestFullBatchesAreSentWithoutWaitingForRelease(t *testing.T) {
	dst := listen(t, "udp4", "127.0.0.1:0")
	c := newConn(t, "udp4", "127.0.0.1:0")
	c.Hold()
	for i := range Slots {
		if _, err := c.WriteToAddrPort(packet(i, 200), addrOf(dst)); err != nil {
			t.Fatal(err)
		}
	}
	// The batch filled up: it left at once, while the hold is still open.
	got := readN(t, dst, Slots)
	c.Release()
	for i, p := range got {
		if binary.BigEndian.Uint32(p) != uint32(i) {
			t.Fatalf("datagram %d is packet %d", i, binary.BigEndian.Uint32(p))
		}
	}
	if s := c.Stats(); s.Calls != 1 || s.Batched != Slots {
		t.Fatalf("stats %+v", s)
	}
}

func TestOversizedAndForeignFamilyWritesGoDirect(t *testing.T) {
	dst := listen(t, "udp4", "127.0.0.1:0")
	c := newConn(t, "udp4", "127.0.0.1:0")
	c.Hold()
	big := packet(1, slotSize+10)
	if _, err := c.WriteToAddrPort(big, addrOf(dst)); err != nil {
		t.Fatal(err)
	}
	// An IPv6 destination on an IPv4 socket is the kernel's error to report, not a queued packet.
	if _, err := c.WriteToAddrPort(packet(2, 50), netip.MustParseAddrPort("[::1]:9")); err == nil {
		t.Fatal("IPv6 destination on an IPv4 socket: no error")
	}
	c.Release()
	got := readN(t, dst, 1)
	if !bytes.Equal(got[0], big) {
		t.Fatal("oversized datagram differs")
	}
	if s := c.Stats(); s.Direct != 2 || s.Batched != 0 {
		t.Fatalf("stats %+v", s)
	}
}

// A write that queues while the last holder releases must still leave (the write re-checks the
// holds after queueing).
func TestConcurrentHoldersLoseNothing(t *testing.T) {
	dst := listen(t, "udp4", "127.0.0.1:0")
	c := newConn(t, "udp4", "127.0.0.1:0")
	const writers, rounds, fan = 4, 200, 5
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range rounds {
				c.Hold()
				for k := range fan {
					_, _ = c.WriteToAddrPort(packet((w*rounds+r)*fan+k, 80), addrOf(dst))
				}
				c.Release()
				// An unheld write from the same goroutine now and then.
				if r%7 == 0 {
					_, _ = c.WriteToAddrPort(packet(-1, 80), addrOf(dst))
				}
			}
		}()
	}
	total := writers * rounds * fan
	unheld := writers * ((rounds + 6) / 7)
	done := make(chan [][]byte)
	go func() { done <- readN(t, dst, total+unheld) }()
	wg.Wait()
	got := <-done
	seen := make(map[uint32]bool)
	for _, p := range got {
		seen[binary.BigEndian.Uint32(p)] = true
	}
	if len(seen) != total+1 { // every numbered packet plus the unheld marker
		t.Fatalf("%d distinct datagrams, want %d", len(seen), total+1)
	}
	s := c.Stats()
	if s.Batched+s.Direct != uint64(total+unheld) || s.Errors != 0 {
		t.Fatalf("stats %+v, want %d datagrams", s, total+unheld)
	}
}

func TestCloseSendsWhatIsQueued(t *testing.T) {
	dst := listen(t, "udp4", "127.0.0.1:0")
	c := newConn(t, "udp4", "127.0.0.1:0")
	c.Hold()
	_, _ = c.WriteToAddrPort(packet(3, 90), addrOf(dst))
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if got := readN(t, dst, 1); binary.BigEndian.Uint32(got[0]) != 3 {
		t.Fatal("wrong datagram")
	}
	// After Close, writes fail and queued ones are counted as errors, without a panic.
	_, _ = c.WriteToAddrPort(packet(4, 90), addrOf(dst))
	c.Release()
	if s := c.Stats(); s.Errors != 1 {
		t.Fatalf("stats %+v, want 1 error", s)
	}
}

func TestNetOpensBatchingSockets(t *testing.T) {
	n, err := NewNet()
	if err != nil {
		t.Fatal(err)
	}
	dst := listen(t, "udp4", "127.0.0.1:0")
	uc, err := n.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer uc.Close()
	c, ok := uc.(*Conn)
	if !ok {
		t.Fatalf("ListenUDP returned %T", uc)
	}
	n.Hold()
	_, _ = c.WriteToAddrPort(packet(1, 64), addrOf(dst))
	_, _ = c.WriteToAddrPort(packet(2, 64), addrOf(dst))
	n.Release()
	readN(t, dst, 2)
	if s := n.Stats(); s.Batched != 2 || s.Calls != 1 {
		t.Fatalf("stats %+v", s)
	}
}

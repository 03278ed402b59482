// Package rtpin is plain RTP in on UDP ports: a streaming mountpoint fed by ffmpeg, GStreamer or
// another server's rtp_forward. Each stream of a source has its own socket (three for a simulcast
// video: port, port2 and port3 carry layers 0, 1 and 2), read by one goroutine that reuses one
// buffer and hands every datagram to the stream's sfu.Receiver, which parses it, counts and drops
// what is malformed, and delivers the rest to its sinks. A stream may have an RTCP port: the
// source's RTCP arrives there, and keyframe requests (PLI and FIR) go back to the address it came
// from when a viewer needs a keyframe. Data streams relay each UDP datagram as one message to the
// sinks of their DataTrack's sfu.DataReceiver.
package rtpin

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"

	"github.com/strata-rtc/strata/internal/media"
	"github.com/strata-rtc/strata/internal/sfu"
	"github.com/strata-rtc/strata/internal/source"
)

// Config describes a source: its streams, in order.
type Config struct {
	// ID names the source in logs and receiver ids (e.g. "mountpoint 1").
	ID string
	// Host is the address every stream listens on unless it names its own; empty: all interfaces.
	Host    string
	Streams []Stream
	Log     *slog.Logger
}

// Stream is one stream of a source, with Janus's per-stream options.
type Stream struct {
	Kind  source.Kind
	MID   string
	Label string
	// Codec, PT and Fmtp describe the RTP (unused for data).
	Codec media.Codec
	PT    uint8
	Fmtp  string
	// Host is the address to listen on, Iface an interface name or address to listen on instead
	// (the interface's first IPv4 address); both empty: Config.Host. Mcast is a multicast group
	// to join (on Iface when given).
	Host, Iface, Mcast string
	// Port is the UDP port the RTP (or data) comes to; 0 picks a free one. Port2 and Port3 are
	// the simulcast layers 1 and 2 (Simulcast only; 0 picks).
	Port, Port2, Port3 int
	Simulcast          bool
	// RTCP opens a port for the source's RTCP (RTCPPort, 0 picks), to which keyframe requests
	// are sent back.
	RTCP     bool
	RTCPPort int
	// TextData: a data stream's messages are text (else binary); BufferMsg keeps the last one
	// for new subscribers.
	TextData, BufferMsg bool
}

// Ports are the ports a stream listens on (0: none).
type Ports struct {
	Port, Port2, Port3, RTCP int
}

// Source is a running RTP source. Create it with Open.
type Source struct {
	cfg     Config
	log     *slog.Logger
	streams []*stream
	tracks  []source.Track
	wg      sync.WaitGroup
	closed  atomic.Bool
	once    sync.Once
}

var _ source.Source = (*Source)(nil)

// Open binds every stream's sockets and starts reading them. Receivers are made with rc (its ID,
// Codec and Simulcast are set per stream). On error nothing stays open.
func Open(cfg Config, rc sfu.ReceiverConfig) (*Source, error) {
	if len(cfg.Streams) == 0 {
		return nil, errors.New("rtpin: no streams")
	}
	s := &Source{cfg: cfg, log: cfg.Log}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	for i := range cfg.Streams {
		st, err := s.openStream(cfg.Streams[i], rc)
		if err != nil {
			s.closeSockets()
			return nil, fmt.Errorf("rtpin: %s stream %q: %w", cfg.Streams[i].Kind, cfg.Streams[i].MID, err)
		}
		s.streams = append(s.streams, st)
		s.tracks = append(s.tracks, st.track)
	}
	for _, st := range s.streams {
		s.startReaders(st)
	}
	return s, nil
}

// Tracks implements source.Source.
func (s *Source) Tracks() []source.Track { return s.tracks }

// Ports returns the ports of each stream, in the order of Config.Streams (what Janus reports in
// create's reply, so a port asked as 0 can be told to the sender).
func (s *Source) Ports() []Ports {
	out := make([]Ports, len(s.streams))
	for i, st := range s.streams {
		for l, c := range st.conns {
			if c != nil {
				p := c.LocalAddr().(*net.UDPAddr).Port
				switch l {
				case 0:
					out[i].Port = p
				case 1:
					out[i].Port2 = p
				case 2:
					out[i].Port3 = p
				}
			}
		}
		if st.rtcp != nil {
			out[i].RTCP = st.rtcp.LocalAddr().(*net.UDPAddr).Port
		}
	}
	return out
}

// Data returns the data track of the stream with this mid (nil if there is none).
func (s *Source) Data(mid string) *DataTrack {
	for _, st := range s.streams {
		if st.data != nil && st.cfg.MID == mid {
			return st.data
		}
	}
	return nil
}

// Stats are a stream's counters beyond its Receiver's.
type Stats struct {
	// LastReceived is when the newest datagram arrived (sfu.Now's clock; 0: none yet).
	LastReceived int64
	// SSRCChanges counts new SSRCs after the first on any layer (the sender restarted).
	SSRCChanges uint64
	// RTCPReceived counts datagrams on the RTCP port (or muxed on the RTP port);
	// KeyframeRequestsSent the PLI/FIR sent back, KeyframeRequestsUnsent those that had nowhere
	// to go (no RTCP port, or no RTCP received yet to learn the sender's address from).
	RTCPReceived, KeyframeRequestsSent, KeyframeRequestsUnsent uint64
	// Messages counts a data stream's messages.
	Messages uint64
}

// Stats returns the counters of the stream with this mid.
func (s *Source) Stats(mid string) (Stats, bool) {
	for _, st := range s.streams {
		if st.cfg.MID == mid {
			return st.stats(), true
		}
	}
	return Stats{}, false
}

// Close implements source.Source: it closes the sockets, waits for the readers and closes the
// receivers.
func (s *Source) Close() error {
	s.once.Do(func() {
		s.closed.Store(true)
		s.closeSockets()
		s.wg.Wait()
		for _, st := range s.streams {
			if st.recv != nil {
				st.recv.Close()
			}
		}
	})
	return nil
}

func (s *Source) closeSockets() {
	for _, st := range s.streams {
		st.closeSockets()
	}
}

// listenAddr is the address a stream binds: its interface's, its host, or the source's host.
func (s *Source) listenAddr(st Stream) (netip.Addr, error) {
	host := st.Host
	if host == "" {
		host = s.cfg.Host
	}
	if st.Iface != "" {
		return ifaceAddr(st.Iface)
	}
	if host == "" {
		return netip.IPv4Unspecified(), nil
	}
	if a, err := netip.ParseAddr(host); err == nil {
		return a, nil
	}
	ips, err := net.LookupIP(host)
	if err != nil || len(ips) == 0 {
		return netip.Addr{}, fmt.Errorf("host %q: %v", host, err)
	}
	a, _ := netip.AddrFromSlice(ips[0])
	return a.Unmap(), nil
}

// ifaceAddr resolves Janus's iface: an address, or an interface name (its first IPv4 address,
// else its first address).
func ifaceAddr(name string) (netip.Addr, error) {
	if a, err := netip.ParseAddr(name); err == nil {
		return a, nil
	}
	ifi, err := net.InterfaceByName(name)
	if err != nil {
		return netip.Addr{}, fmt.Errorf("interface %q: %v", name, err)
	}
	addrs, err := ifi.Addrs()
	if err != nil {
		return netip.Addr{}, fmt.Errorf("interface %q: %v", name, err)
	}
	var first netip.Addr
	for _, a := range addrs {
		n, ok := a.(*net.IPNet)
		if !ok {
			continue
		}
		ip, _ := netip.AddrFromSlice(n.IP)
		ip = ip.Unmap()
		if ip.Is4() {
			return ip, nil
		}
		if !first.IsValid() {
			first = ip
		}
	}
	if !first.IsValid() {
		return netip.Addr{}, fmt.Errorf("interface %q has no address", name)
	}
	return first, nil
}

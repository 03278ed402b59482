package audiobridge

import (
	"net"
	"slices"
	"sort"
	"strconv"

	"github.com/strata-rtc/strata/internal/audio"
	"github.com/strata-rtc/strata/internal/media"
	"github.com/strata-rtc/strata/internal/sfu"

	"github.com/strata-rtc/strata/internal/plugin"
)

// mixForwarder is an rtp_forward of the room's mix: a listener of the mix that contributes nothing
// (so it shares the full mix's encoding with the silent participants of the same settings), its
// LocalSource, and the core's Forwarder sending that source as RTP or SRTP.
type mixForwarder struct {
	listener *audio.Listener
	out      *mixOut
	fwd      *sfu.Forwarder
	group    int // 1-based: forwards that group's mix; 0: the whole room's
	info     ForwarderInfo
}

func (f *mixForwarder) close() {
	f.out.src.Receiver().RemoveSink(f.fwd)
	_ = f.fwd.Close()
	f.out.src.Close()
}

// forwardCodec is the media codec and default payload type of rtp_forward's codec.
func forwardCodec(name string) (media.Codec, int) {
	switch name {
	case "pcmu":
		return media.CodecPCMU, 0
	case "pcma":
		return media.CodecPCMA, 8
	}
	return media.CodecOpus, DefaultRTPOpusPT
}

func (p *Plugin) rtpForward(f *RTPForward) (any, *Error) {
	r, err := p.authorized(f.Room, f.Secret)
	if err != nil {
		return nil, err
	}
	if err := p.checkAdminKey(f.AdminKey, p.cfg.LockRTPForward); err != nil {
		return nil, err
	}
	if err := r.checkGroup(f.Group, false); err != nil {
		return nil, err
	}
	network := "udp"
	switch f.HostFamily {
	case "ipv4":
		network = "udp4"
	case "ipv6":
		network = "udp6"
	}
	addr, rerr := net.ResolveUDPAddr(network, net.JoinHostPort(f.Host, strconv.Itoa(f.Port)))
	if rerr != nil {
		return nil, errorf(ErrInvalid, "Could not resolve address (%s)...", f.Host)
	}
	var key *sfu.SRTPKey
	if f.SRTPSuite != 0 {
		if key, rerr = sfu.ParseSRTPKey(f.SRTPSuite, f.SRTPCrypto); rerr != nil {
			return nil, errorf(ErrInvalid, "Invalid SRTP crypto (%v)", rerr)
		}
	}
	codec, pt := forwardCodec(f.Codec)
	if f.PType != nil {
		pt = *f.PType & 0x7f
	}
	fw, err := r.newForwarder(f, codec, pt, addr, key)
	if err != nil {
		return nil, err
	}
	return ForwardReply{Audiobridge: "success", Room: r.id, Group: f.Group, StreamID: fw.info.StreamID,
		Host: f.Host, Port: f.Port}, nil
}

func (r *room) newForwarder(f *RTPForward, codec media.Codec, pt int, addr *net.UDPAddr, key *sfu.SRTPKey) (*mixForwarder, *Error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var id uint32
	for id = plugin.RandomUint32(); r.forwarders[id] != nil; id = plugin.RandomUint32() {
	}
	ssrc := id
	if f.SSRC != nil {
		ssrc = *f.SSRC
	}
	var (
		l   *audio.Listener
		err error
	)
	switch codec {
	case media.CodecPCMU:
		l, err = audio.NewG711Listener(r.format(), audio.ULaw)
	case media.CodecPCMA:
		l, err = audio.NewG711Listener(r.format(), audio.ALaw)
	default:
		l, err = audio.NewListener(r.format(), audio.EncoderConfig{Bitrate: r.opts.DefaultBitrate,
			Complexity: DefaultQuality, FEC: r.opts.DefaultExpectedLoss > 0, ExpectedLoss: r.opts.DefaultExpectedLoss})
	}
	if err != nil {
		return nil, errorf(ErrLibopus, "Error creating Opus encoder for RTP forwarder")
	}
	fwd, err := sfu.NewForwarder(addr, sfu.ForwarderConfig{SSRC: ssrc, PayloadType: uint8(pt), SRTP: key})
	if err != nil {
		return nil, errorf(ErrUnknown, "Error creating the forwarder's socket (%v)", err)
	}
	out := newMixOut(codec, uint8(pt), nil)
	out.src.Receiver().AddSink(fwd)
	mf := &mixForwarder{listener: l, out: out, fwd: fwd, group: int(r.groupIndex(f.Group)), info: ForwarderInfo{
		StreamID: id, Group: f.Group, IP: addr.IP.String(), Port: f.Port, SSRC: ssrc, Codec: f.Codec, PType: pt,
		AlwaysOn: f.AlwaysOn,
	}}
	if key != nil {
		srtp := true
		mf.info.SRTP = &srtp
	}
	r.forwarders[id] = mf
	r.changedLocked()
	return mf, nil
}

// checkGroup applies a request's group: it must exist when given (494); required says the room's
// groups make it mandatory (483).
func (r *room) checkGroup(group *string, required bool) *Error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.opts.Groups) == 0 {
		return nil
	}
	if group == nil {
		if required {
			return errorf(ErrMissing, "Missing mandatory element (group)")
		}
		return nil
	}
	if !slices.Contains(r.opts.Groups, *group) {
		return errorf(ErrNoSuchGroup, "No such group (%s)", *group)
	}
	return nil
}

func (p *Plugin) stopRTPForward(s *StopRTPForward) (any, *Error) {
	r, err := p.authorized(s.Room, s.Secret)
	if err != nil {
		return nil, err
	}
	if err := p.checkAdminKey(s.AdminKey, p.cfg.LockRTPForward); err != nil {
		return nil, err
	}
	id := uint32(s.StreamID)
	r.mu.Lock()
	f := r.forwarders[id]
	delete(r.forwarders, id)
	r.changedLocked()
	r.mu.Unlock()
	if f != nil {
		f.close()
	}
	return ForwardReply{Audiobridge: "success", Room: r.id, StreamID: id}, nil
}

func (r *room) listForwarders() ForwardersReply {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]ForwarderInfo, 0, len(r.forwarders))
	for _, f := range r.forwarders {
		out = append(out, f.info)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].StreamID < out[j].StreamID })
	return ForwardersReply{Audiobridge: "forwarders", Room: r.id, Forwarders: out}
}

package videoroom

import (
	"net"
	"strconv"

	"github.com/strata-rtc/strata/internal/sfu"

	"github.com/strata-rtc/strata/internal/plugin"
)

// forwarder is one rtp_forward entry: an sfu.Forwarder on a layer of a published stream, with
// what listforwarders reports about it.
type forwarder struct {
	id     uint32
	stream *pubStream
	host   string
	port   int
	sink   *sfu.Forwarder
}

func (f *forwarder) close() {
	f.stream.recv.RemoveSink(f.sink)
	_ = f.sink.Close()
}

func (f *forwarder) describe() map[string]any {
	cfg := f.sink.Config()
	d := map[string]any{"stream_id": f.id, "type": f.stream.kind, "host": f.host, "port": f.port, "srtp": cfg.SRTP != nil}
	if cfg.SSRC != 0 {
		d["ssrc"] = cfg.SSRC
	}
	if cfg.PayloadType != 0 {
		d["pt"] = cfg.PayloadType
	}
	if f.stream.simulcast {
		d["substream"] = cfg.Layer
	}
	return d
}

// forwarderTarget finds the room and publisher an rtp_forward request names: an active one of
// this node, or one of another node's (pub.node), whose forwarders are run there.
func (p *Plugin) forwarderTarget(b body) (*room, *publisher, *requestError) {
	if p.cfg.LockRTPForward {
		if err := b.checkSecret("admin_key", p.cfg.AdminKey); err != nil {
			return nil, nil, err
		}
	}
	r, err := p.adminRoom(b)
	if err != nil {
		return nil, nil, err
	}
	id, _, err := b.uint("publisher_id", true)
	if err != nil {
		return nil, nil, err
	}
	pub := r.participant(id)
	if pub != nil && pub.node != "" && p.cl != nil {
		return r, pub, nil
	}
	if pub == nil || pub.node != "" || !pub.isActive() {
		return nil, nil, errorf(ErrNoSuchFeed, "No such publisher (%d)", id)
	}
	return r, pub, nil
}

func (p *Plugin) rtpForward(b body) (map[string]any, *requestError) {
	r, pub, err := p.forwarderTarget(b)
	if err != nil {
		return nil, err
	}
	if pub.node != "" {
		return p.cl.forwardAt(r, pub.node, b)
	}
	key, err := forwardingKey(b)
	if err != nil {
		return nil, err
	}
	host, _, err := b.str("host", false)
	if err != nil {
		return nil, err
	}
	entries, _, err := b.list("streams", true)
	if err != nil {
		return nil, err
	}
	var created []*forwarder
	fail := func(e *requestError) (map[string]any, *requestError) {
		for _, f := range created {
			f.close()
		}
		return nil, e
	}
	for _, e := range entries {
		fs, err := pub.newForwarders(e, host, key)
		if err != nil {
			return fail(err)
		}
		created = append(created, fs...)
	}
	pub.mu.Lock()
	out := []map[string]any{}
	for _, f := range created {
		pub.forwarders[f.id] = f
		f.stream.recv.AddSink(f.sink)
		out = append(out, f.describe())
	}
	pub.mu.Unlock()
	return map[string]any{short: "rtp_forward", "room": r.id, "publisher_id": pub.id, "forwarders": out}, nil
}

// forwardingKey reads srtp_suite and srtp_crypto, which encrypt every stream of the request (nil
// without them, as Janus, which needs both).
func forwardingKey(b body) (*sfu.SRTPKey, *requestError) {
	suite, hasSuite, err := b.uint("srtp_suite", false)
	if err != nil {
		return nil, err
	}
	crypto, hasCrypto, err := b.str("srtp_crypto", false)
	if err != nil {
		return nil, err
	}
	if !hasSuite || !hasCrypto {
		return nil, nil
	}
	key, kerr := sfu.ParseSRTPKey(int(suite), crypto)
	if kerr != nil {
		return nil, errorf(ErrInvalidElement, "Invalid SRTP parameters (%v)", kerr)
	}
	return key, nil
}

// newForwarders opens the sockets of one streams entry: port for the stream (its base layer), and
// port_2/port_3 for the other simulcast layers.
func (pub *publisher) newForwarders(e body, defHost string, key *sfu.SRTPKey) ([]*forwarder, *requestError) {
	mid, _, err := e.str("mid", true)
	if err != nil {
		return nil, err
	}
	st := pub.stream(mid)
	if st == nil {
		return nil, errorf(ErrNoSuchFeed, "No such stream %s", mid)
	}
	host, hasHost, err := e.str("host", false)
	if err != nil {
		return nil, err
	}
	if !hasHost {
		host = defHost
	}
	if host == "" {
		return nil, errorf(ErrMissingElement, "Missing mandatory element (host)")
	}
	var out []*forwarder
	for layer, suffix := range []string{"", "_2", "_3"} {
		port, ok, err := e.uint("port"+suffix, layer == 0)
		if err != nil {
			return closeAll(out, err)
		}
		if !ok {
			continue
		}
		if port == 0 || port > 65535 {
			return closeAll(out, errorf(ErrInvalidElement, "Invalid element (port%s)", suffix))
		}
		ssrc, _, err := e.uint("ssrc"+suffix, false)
		if err != nil {
			return closeAll(out, err)
		}
		pt, _, err := e.uint("pt"+suffix, false)
		if err != nil || pt > 127 {
			return closeAll(out, errorf(ErrInvalidElement, "Invalid element (pt%s)", suffix))
		}
		addr, rerr := net.ResolveUDPAddr("udp", net.JoinHostPort(host, strconv.Itoa(int(port))))
		if rerr != nil {
			return closeAll(out, errorf(ErrInvalidElement, "Invalid host %s: %v", host, rerr))
		}
		sink, ferr := sfu.NewForwarder(addr, sfu.ForwarderConfig{Layer: layer, SSRC: uint32(ssrc), PayloadType: uint8(pt), SRTP: key})
		if ferr != nil {
			return closeAll(out, errorf(ErrUnknown, "Forwarding to %s: %v", addr, ferr))
		}
		out = append(out, &forwarder{id: plugin.RandomUint32(), stream: st, host: host, port: int(port), sink: sink})
	}
	return out, nil
}

func closeAll(fs []*forwarder, err *requestError) ([]*forwarder, *requestError) {
	for _, f := range fs {
		_ = f.sink.Close()
	}
	return nil, err
}

func (p *Plugin) stopRTPForward(b body) (map[string]any, *requestError) {
	r, pub, err := p.forwarderTarget(b)
	if err != nil {
		return nil, err
	}
	if pub.node != "" {
		return p.cl.forwardAt(r, pub.node, b)
	}
	id, _, err := b.uint("stream_id", true)
	if err != nil {
		return nil, err
	}
	pub.mu.Lock()
	f := pub.forwarders[uint32(id)]
	delete(pub.forwarders, uint32(id))
	pub.mu.Unlock()
	if f == nil {
		return nil, errorf(ErrNoSuchFeed, "No such stream (%d)", id)
	}
	f.close()
	return map[string]any{short: "stop_rtp_forward", "room": r.id, "publisher_id": pub.id, "stream_id": id}, nil
}

func (p *Plugin) listForwarders(b body) (map[string]any, *requestError) {
	r, err := p.adminRoom(b)
	if err != nil {
		return nil, err
	}
	out := localForwarders(r)
	if p.cl != nil {
		out = append(out, p.cl.otherForwarders(r, b)...)
	}
	return map[string]any{short: "forwarders", "room": r.id, "publishers": out}, nil
}

// localForwarders are the listforwarders entries of room r's publishers on this node.
func localForwarders(r *room) []any {
	out := []any{}
	for _, pub := range r.members() {
		pub.mu.Lock()
		var fs []map[string]any
		for _, f := range pub.forwarders {
			fs = append(fs, f.describe())
		}
		pub.mu.Unlock()
		if len(fs) > 0 {
			out = append(out, map[string]any{"publisher_id": pub.id, "forwarders": fs})
		}
	}
	return out
}

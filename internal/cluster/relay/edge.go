package relay

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/pion/rtcp"
	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/internal/sfu"
)

type importKey struct{ origin, feed string }

// Import is one importer's hold on a feed of another node. Every importer of a feed on this node
// shares its Receivers, and the feed crosses the link once.
type Import struct {
	shared *sharedImport
	once   sync.Once
	mu     sync.Mutex
	onGone func()
}

// Descriptor is the feed as the origin described it.
func (i *Import) Descriptor() FeedDescriptor { return i.shared.desc }

// Receivers are the feed's streams on this node, by mid: ordinary Receivers (Simulcast as at the
// origin, extension ids the link's) for DownTracks and allocators.
func (i *Import) Receivers() map[string]*sfu.Receiver {
	m := make(map[string]*sfu.Receiver, len(i.shared.streams))
	for _, s := range i.shared.streams {
		m[s.desc.Mid] = s.recv
	}
	return m
}

// OnGone sets what is called (once, on a goroutine of the relay) when the feed is gone: the origin
// unexported it, or the link to the origin failed. The plugin removes the feed then. A feed already
// gone calls f at once.
func (i *Import) OnGone(f func()) {
	i.mu.Lock()
	i.onGone = f
	i.mu.Unlock()
	if i.shared.isGone() {
		i.gone()
	}
}

func (i *Import) gone() {
	i.mu.Lock()
	f := i.onGone
	i.onGone = nil
	i.mu.Unlock()
	if f != nil {
		go f()
	}
}

// Release gives up this importer's hold; with the last one the feed stops crossing the link and
// its Receivers close.
func (i *Import) Release() { i.once.Do(func() { i.shared.release(i) }) }

// sharedImport is a feed imported from an origin, shared by its importers.
type sharedImport struct {
	relay *Relay
	key   importKey
	link  *link
	desc  FeedDescriptor

	streams []*streamIn
	data    []*dataIn

	// ready is closed when start has returned, with its error in err; the streams do not change
	// after that.
	ready chan struct{}
	err   error

	// Under Relay.mu.
	handles map[*Import]bool
	ended   bool
}

// streamIn is one stream of an imported feed.
type streamIn struct {
	desc   StreamDescriptor
	recv   *sfu.Receiver
	layers []*layerIn
}

// layerIn is one layer's receiver on the link.
type layerIn struct {
	ssrc   uint32
	rtp    *webrtc.RTPReceiver
	losses lossTracker
}

// Import receives feedID from originNode (refcounted: a feed already imported is shared). It sets
// up the link if there is none, asks the origin for the descriptor, opens a receiver per layer
// and asks the origin to send.
func (r *Relay) Import(ctx context.Context, originNode, feedID string) (*Import, error) {
	key := importKey{originNode, feedID}
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil, ErrClosed
	}
	si := r.imports[key]
	fresh := si == nil
	if fresh {
		si = &sharedImport{relay: r, key: key, ready: make(chan struct{}), handles: map[*Import]bool{}}
		r.imports[key] = si
	}
	h := &Import{shared: si}
	si.handles[h] = true
	r.mu.Unlock()
	if fresh {
		si.err = si.start(ctx)
		close(si.ready)
		if si.err != nil {
			si.end(false)
		}
	}
	select {
	case <-si.ready:
	case <-ctx.Done():
		h.Release()
		return nil, ctx.Err()
	}
	if si.err != nil {
		h.Release()
		return nil, si.err
	}
	return h, nil
}

// start sets the import up; on error the caller ends it.
func (si *sharedImport) start(ctx context.Context) error {
	r := si.relay
	var answer struct {
		Instance   string          `json:"instance"`
		Descriptor json.RawMessage `json:"descriptor"`
	}
	if err := r.sig.Call(ctx, si.key.origin, pathDescribe, feedRequest{Feed: si.key.feed}, &answer); err != nil {
		return fmt.Errorf("relay: describing %q on %s: %w", si.key.feed, si.key.origin, err)
	}
	desc, err := DecodeDescriptor(answer.Descriptor)
	if err != nil {
		return err
	}
	if desc.Feed != si.key.feed {
		return fmt.Errorf("%w: asked for %q, described %q", ErrBadDescriptor, si.key.feed, desc.Feed)
	}
	l, err := r.freshLink(ctx, si.key.origin, answer.Instance)
	if err != nil {
		return err
	}
	r.mu.Lock()
	si.link, si.desc = l, desc // handleGone compares generations under r.mu
	r.mu.Unlock()
	req := subscribeRequest{Feed: desc.Feed, Generation: desc.Generation, Channels: map[string]uint16{}}
	for _, sd := range desc.Streams {
		if sd.Kind == dataKind {
			req.SSRCs = append(req.SSRCs, nil)
			if l.plain != nil {
				continue // no SCTP on a plain link: the data stays at the origin
			}
			d, err := si.openDataIn(l, sd)
			if err != nil {
				return err
			}
			si.data = append(si.data, d)
			req.Channels[sd.Mid] = d.id
			continue
		}
		s := &streamIn{desc: sd}
		si.streams = append(si.streams, s)
		kind := webrtc.RTPCodecTypeAudio
		if sd.Kind == "video" {
			kind = webrtc.RTPCodecTypeVideo
		}
		var ssrcs []uint32
		for range sd.Layers {
			li := &layerIn{ssrc: r.allocSSRC(si.key.origin)}
			ssrcs = append(ssrcs, li.ssrc)
			s.layers = append(s.layers, li)
			if l.plain != nil {
				continue // registered with the link below, once the Receiver exists
			}
			rr, err := r.api.NewRTPReceiver(kind, l.dtls)
			if err != nil {
				return fmt.Errorf("relay: receiving %q: %w", desc.Feed, err)
			}
			li.rtp = rr
			if err := rr.Receive(webrtc.RTPReceiveParameters{Encodings: []webrtc.RTPDecodingParameters{
				{RTPCodingParameters: webrtc.RTPCodingParameters{SSRC: webrtc.SSRC(li.ssrc)}},
			}}); err != nil {
				return fmt.Errorf("relay: receiving %q: %w", desc.Feed, err)
			}
		}
		req.SSRCs = append(req.SSRCs, ssrcs)
		s.recv = sfu.NewReceiver(sfu.ReceiverConfig{
			ID:    "relay/" + si.key.origin + "/" + desc.Feed + "/" + sd.Mid,
			Codec: codecOf(sd.Codec.MimeType), Simulcast: sd.Simulcast, Extensions: sd.extIDs(),
		}, si.keyframeRequester(s))
		for layer, li := range s.layers {
			s.recv.SetLayerSSRC(layer, li.ssrc)
			if l.plain != nil {
				l.plain.addIn(li.ssrc, plainIn{si: si, s: s, layer: layer, li: li})
			} else {
				go si.read(s, layer, li)
			}
		}
	}
	if err := r.sig.Call(ctx, si.key.origin, pathSubscribe, req, nil); err != nil {
		return fmt.Errorf("relay: subscribing to %q on %s: %w", desc.Feed, si.key.origin, err)
	}
	return nil
}

// freshLink returns the link with origin, replacing one with an earlier run of it (the origin
// restarted before the link's failure showed): its instance is not the one that described the feed.
func (r *Relay) freshLink(ctx context.Context, origin, instance string) (*link, error) {
	l, err := r.ensureLink(ctx, origin)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	stale := l.peerInstance != "" && instance != "" && l.peerInstance != instance
	r.mu.Unlock()
	if !stale {
		return l, nil
	}
	r.linkDown(l, fmt.Errorf("relay: %s restarted", origin))
	return r.ensureLink(ctx, origin)
}

// read takes one layer's packets from the link's ORTC receiver (nothing allocated per packet).
func (si *sharedImport) read(s *streamIn, layer int, li *layerIn) {
	buf := make([]byte, 1500)
	track := li.rtp.Track()
	for {
		n, _, err := track.Read(buf)
		if err != nil && n == 0 {
			return
		}
		if err != nil || n < 12 {
			continue // a payload type the link does not know: Pion has read the packet
		}
		si.deliver(s, layer, li, buf[:n], sfu.Now())
	}
}

// deliver hands one packet of a layer to its Receiver, noting losses for the NACKs.
func (si *sharedImport) deliver(s *streamIn, layer int, li *layerIn, pkt []byte, now time.Duration) {
	seq := uint16(pkt[2])<<8 | uint16(pkt[3])
	if drop := si.relay.dropIncoming.Load(); drop != nil && (*drop)(li.ssrc, seq) {
		return
	}
	si.relay.c.packetsReceived.Add(1)
	li.losses.received(seq, now)
	s.recv.WriteRTP(layer, pkt, now)
}

// keyframeRequester sends the edge's keyframe requests to the origin as PLI on the link.
func (si *sharedImport) keyframeRequester(s *streamIn) sfu.KeyframeRequester {
	return func(layer int, _ uint32) {
		if layer < 0 || layer >= len(s.layers) || si.link == nil {
			return
		}
		pli := &rtcp.PictureLossIndication{MediaSSRC: s.layers[layer].ssrc}
		if err := si.link.writeRTCP([]rtcp.Packet{pli}); err == nil {
			si.relay.c.keyframesAsked.Add(1)
		}
	}
}

func (si *sharedImport) isGone() bool {
	si.relay.mu.Lock()
	defer si.relay.mu.Unlock()
	return si.ended
}

// release drops one importer; the last one ends the import and tells the origin.
func (si *sharedImport) release(h *Import) {
	r := si.relay
	r.mu.Lock()
	delete(si.handles, h)
	last := len(si.handles) == 0 && !si.ended
	r.mu.Unlock()
	if !last {
		return
	}
	if si.end(false) && si.desc.Generation != 0 {
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), r.cfg.ConnectTimeout)
			defer cancel()
			req := feedRequest{Feed: si.key.feed, Generation: si.desc.Generation}
			if err := r.sig.Call(ctx, si.key.origin, pathRelease, req, nil); err != nil {
				r.log.Debug("releasing a feed", "origin", si.key.origin, "feed", si.key.feed, "err", err)
			}
		}()
	}
}

// end stops the import (once; false if it had ended): receivers stop, Receivers close, and with
// notify the importers are told it is gone.
func (si *sharedImport) end(notify bool) bool {
	r := si.relay
	r.mu.Lock()
	if si.ended {
		r.mu.Unlock()
		return false
	}
	si.ended = true
	if r.imports[si.key] == si {
		delete(r.imports, si.key)
	}
	var handles []*Import
	for h := range si.handles {
		handles = append(handles, h)
	}
	r.mu.Unlock()
	<-si.ready // start has finished with the streams
	for _, s := range si.streams {
		for _, li := range s.layers {
			if li.rtp != nil {
				_ = li.rtp.Stop()
			}
			if si.link != nil && si.link.plain != nil {
				si.link.plain.remove(li.ssrc)
			}
		}
		if s.recv != nil {
			s.recv.Close()
		}
	}
	for _, d := range si.data {
		d.close(si)
	}
	if notify {
		for _, h := range handles {
			h.gone()
		}
	}
	return true
}

// handleGone: the origin unexported a feed this node imports.
func (r *Relay) handleGone(_ context.Context, from string, body json.RawMessage) (any, error) {
	var req feedRequest
	if err := decode(pathGone, body, &req); err != nil {
		return nil, err
	}
	r.mu.Lock()
	si := r.imports[importKey{from, req.Feed}]
	match := si != nil && (req.Generation == 0 || si.desc.Generation == req.Generation)
	r.mu.Unlock()
	if match {
		go si.end(true) // waits for a start under way, which may be waiting for this answer
	}
	return struct{}{}, nil
}

// nackLoop asks the origins again for what is missing on every imported layer.
func (r *Relay) nackLoop() {
	defer close(r.done)
	t := time.NewTicker(r.cfg.NACKInterval)
	defer t.Stop()
	var seqs []uint16
	var imports []*sharedImport
	for {
		select {
		case <-r.stop:
			return
		case <-t.C:
		}
		now := sfu.Now()
		imports = r.importsSnapshot(imports[:0])
		for _, si := range imports {
			for _, s := range si.streams {
				for _, li := range s.layers {
					seqs = li.losses.due(now, r.cfg.NACKInterval, seqs[:0])
					if len(seqs) == 0 {
						continue
					}
					nack := &rtcp.TransportLayerNack{MediaSSRC: li.ssrc, Nacks: rtcp.NackPairsFromSequenceNumbers(seqs)}
					if err := si.link.writeRTCP([]rtcp.Packet{nack}); err == nil {
						r.c.nacksSent.Add(uint64(len(seqs)))
					}
				}
			}
		}
	}
}

// importsSnapshot appends the imports whose streams are set up to out.
func (r *Relay) importsSnapshot(out []*sharedImport) []*sharedImport {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, si := range r.imports {
		select {
		case <-si.ready:
			if si.err == nil && !si.ended {
				out = append(out, si)
			}
		default:
		}
	}
	return out
}

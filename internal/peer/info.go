package peer

import (
	"fmt"
	"sort"
	"strings"

	"github.com/pion/interceptor/pkg/stats"
	"github.com/pion/sdp/v3"
	"github.com/pion/webrtc/v4"
)

// Info is the `webrtc` part of the admin API's handle_info: ICE, DTLS, per-m-line media statistics and
// the bandwidth estimator's state.
type Info struct {
	ICE  ICEInfo  `json:"ice"`
	DTLS DTLSInfo `json:"dtls"`
	// Media is keyed by mid.
	Media map[string]MediaInfo `json:"media"`
	// BWE is what the provider installed with SetBWEInfo returns; without one, whether TWCC is on.
	BWE any `json:"bwe"`
	// LowPrio is what the provider installed with SetLowPrioInfo returns (the low-priority
	// transfers on this PeerConnection); absent without one.
	LowPrio any `json:"lowprio,omitempty"`
}

// ICEInfo describes the ICE transport.
type ICEInfo struct {
	State            string   `json:"state"`
	GatheringState   string   `json:"gathering-state"`
	Role             string   `json:"ice-role"`
	Mode             string   `json:"ice-mode"`
	Trickle          string   `json:"trickle"`
	AllTrickles      bool     `json:"all-trickles"`
	SelectedPair     string   `json:"selected-pair,omitempty"`
	LocalCandidates  []string `json:"local-candidates"`
	RemoteCandidates []string `json:"remote-candidates"`
}

// DTLSInfo describes the DTLS transport. Role is strata's a=setup: "passive" means DTLS server.
type DTLSInfo struct {
	State                 string `json:"dtls-state"`
	Role                  string `json:"dtls-role"`
	SRTPProfile           string `json:"srtp-profile"`
	Fingerprint           string `json:"fingerprint"`
	RemoteFingerprint     string `json:"remote-fingerprint"`
	RemoteFingerprintHash string `json:"remote-fingerprint-hash"`
}

// MediaInfo describes one m-line. In is what strata receives, Out what it sends.
type MediaInfo struct {
	Type        string      `json:"type"`
	MIndex      int         `json:"mindex"`
	Mid         string      `json:"mid"`
	Direction   string      `json:"direction,omitempty"`
	Codec       string      `json:"codec,omitempty"`
	PayloadType uint8       `json:"pt,omitempty"`
	SSRC        uint32      `json:"ssrc,omitempty"`
	SSRCRTX     uint32      `json:"ssrc-rtx,omitempty"`
	PeerSSRCs   []uint32    `json:"ssrc-peer,omitempty"`
	In          StreamStats `json:"in"`
	Out         StreamStats `json:"out"`
}

// StreamStats are the RTP/RTCP statistics of one direction of an m-line (summed over simulcast
// layers). For data m-lines Packets and Bytes count data channel messages and their bytes.
type StreamStats struct {
	Packets uint64 `json:"packets"`
	Bytes   uint64 `json:"bytes"`
	// Lost: for In, packets strata missed; for Out, packets the peer reported lost.
	Lost int64 `json:"lost"`
	// NACKs: for In, NACKs strata sent; for Out, NACKs the peer sent.
	NACKs    uint32  `json:"nacks"`
	PLIs     uint32  `json:"plis"`
	FIRs     uint32  `json:"firs"`
	JitterMs float64 `json:"jitter_ms"`
	RTTMs    float64 `json:"rtt_ms"`
	// Bitrate in bits per second over the last second.
	Bitrate uint64 `json:"bitrate"`
}

// Info gathers the current state. It is safe to call at any time, also after Close.
func (p *Peer) Info() Info {
	report := p.PC.GetStats()
	info := Info{ICE: p.iceInfo(report), DTLS: p.dtlsInfo(), Media: map[string]MediaInfo{}}
	p.mediaInfo(info.Media, report)
	if f := p.bweInfo.Load(); f != nil && *f != nil {
		info.BWE = (*f)()
	} else {
		info.BWE = map[string]any{"twcc": p.twccNegotiated()}
	}
	if f := p.lowPrioInfo.Load(); f != nil && *f != nil {
		info.LowPrio = (*f)()
	}
	return info
}

func (p *Peer) iceInfo(report webrtc.StatsReport) ICEInfo {
	p.mu.Lock()
	allTrickles := p.candidatesDone
	p.mu.Unlock()
	info := ICEInfo{
		State:          p.PC.ICEConnectionState().String(),
		GatheringState: p.PC.ICEGatheringState().String(),
		Mode:           "full",
		Trickle:        "half",
		AllTrickles:    allTrickles,
	}
	if p.lite {
		info.Mode = "lite"
	}
	if p.fullTrickle {
		info.Trickle = "full"
	}
	ice := p.PC.SCTP().Transport().ICETransport()
	info.Role = ice.Role().String()
	if pair, err := ice.GetSelectedCandidatePair(); err == nil && pair != nil {
		info.SelectedPair = candidateAddress(pair.Local) + " <-> " + candidateAddress(pair.Remote)
	}
	for _, s := range report {
		c, ok := s.(webrtc.ICECandidateStats)
		if !ok {
			continue
		}
		line := fmt.Sprintf("%s %d %s %d typ %s", c.Protocol, uint32(c.Priority), c.IP, c.Port, c.CandidateType)
		if c.Type == webrtc.StatsTypeLocalCandidate {
			info.LocalCandidates = append(info.LocalCandidates, line)
		} else {
			info.RemoteCandidates = append(info.RemoteCandidates, line)
		}
	}
	sort.Strings(info.LocalCandidates)
	sort.Strings(info.RemoteCandidates)
	return info
}

// candidateAddress formats a candidate as Janus does: "192.0.2.2:43529 [host,udp]".
func candidateAddress(c *webrtc.ICECandidate) string {
	if c == nil {
		return ""
	}
	return fmt.Sprintf("%s:%d [%s,%s]", c.Address, c.Port, c.Typ, c.Protocol)
}

func (p *Peer) dtlsInfo() DTLSInfo {
	info := DTLSInfo{State: p.PC.SCTP().Transport().State().String()}
	if s := p.srtp.Load(); s != nil {
		info.SRTPProfile = *s
	}
	if local := p.PC.LocalDescription(); local != nil {
		info.Role = sdpAttribute(local.SDP, "setup")
		_, info.Fingerprint = splitFingerprint(sdpAttribute(local.SDP, "fingerprint"))
	}
	if remote := p.PC.RemoteDescription(); remote != nil {
		info.RemoteFingerprintHash, info.RemoteFingerprint = splitFingerprint(sdpAttribute(remote.SDP, "fingerprint"))
	}
	return info
}

// sdpAttribute returns the value of the first a=<key>: line (session or media level).
func sdpAttribute(s, key string) string {
	prefix := "a=" + key + ":"
	for line := range strings.Lines(s) {
		if v, ok := strings.CutPrefix(strings.TrimRight(line, "\r\n"), prefix); ok {
			return v
		}
	}
	return ""
}

func splitFingerprint(v string) (hash, value string) {
	hash, value, _ = strings.Cut(v, " ")
	return hash, value
}

func (p *Peer) twccNegotiated() bool {
	for _, t := range p.PC.GetTransceivers() {
		if s := t.Sender(); s != nil {
			for _, ext := range s.GetParameters().HeaderExtensions {
				if ext.URI == sdp.TransportCCURI {
					return true
				}
			}
		}
	}
	return false
}

// mediaInfo fills one entry per m-line of the local description.
func (p *Peer) mediaInfo(out map[string]MediaInfo, report webrtc.StatsReport) {
	mindex := p.mlineIndexes()
	for _, t := range p.PC.GetTransceivers() {
		mid := t.Mid()
		if mid == "" {
			continue
		}
		m := MediaInfo{Type: t.Kind().String(), MIndex: mindex[mid], Mid: mid, Direction: t.Direction().String()}
		p.receiverInfo(&m, t.Receiver())
		p.senderInfo(&m, t.Sender())
		m.In.Bitrate, m.Out.Bitrate = p.monitor.bitrates(mid)
		out[mid] = m
	}
	if sctp := p.PC.SCTP(); sctp != nil && sctp.State() != webrtc.SCTPTransportStateClosed {
		for mid, idx := range mindex {
			if _, ok := out[mid]; !ok {
				out[mid] = dataInfo(mid, idx, report)
			}
		}
	}
}

// mlineIndexes maps mid to m-line index in the local description.
func (p *Peer) mlineIndexes() map[string]int {
	idx := map[string]int{}
	local := p.PC.LocalDescription()
	if local == nil {
		return idx
	}
	parsed, err := local.Unmarshal()
	if err != nil {
		return idx
	}
	for i, md := range parsed.MediaDescriptions {
		if mid, ok := md.Attribute(sdp.AttrKeyMID); ok {
			idx[mid] = i
		}
	}
	return idx
}

func dataInfo(mid string, mindex int, report webrtc.StatsReport) MediaInfo {
	m := MediaInfo{Type: "data", MIndex: mindex, Mid: mid}
	for _, s := range report {
		if dc, ok := s.(webrtc.DataChannelStats); ok {
			m.In.Packets += uint64(dc.MessagesReceived)
			m.In.Bytes += dc.BytesReceived
			m.Out.Packets += uint64(dc.MessagesSent)
			m.Out.Bytes += dc.BytesSent
		}
	}
	return m
}

func (p *Peer) receiverInfo(m *MediaInfo, r *webrtc.RTPReceiver) {
	if r == nil {
		return
	}
	for _, track := range r.Tracks() {
		ssrc := uint32(track.SSRC())
		if ssrc == 0 {
			continue
		}
		m.PeerSSRCs = append(m.PeerSSRCs, ssrc)
		if m.Codec == "" {
			m.Codec = codecName(track.Codec().MimeType)
			m.PayloadType = uint8(track.PayloadType())
		}
		if s := p.streamStats(ssrc); s != nil {
			addInbound(&m.In, s)
		}
	}
}

func (p *Peer) senderInfo(m *MediaInfo, s *webrtc.RTPSender) {
	if s == nil || s.Track() == nil {
		return
	}
	params := s.GetParameters()
	if len(params.Codecs) > 0 {
		m.Codec = codecName(params.Codecs[0].MimeType)
		m.PayloadType = uint8(params.Codecs[0].PayloadType)
	}
	clockRate := uint32(90000)
	if len(params.Codecs) > 0 && params.Codecs[0].ClockRate > 0 {
		clockRate = params.Codecs[0].ClockRate
	}
	for _, enc := range params.Encodings {
		if m.SSRC == 0 {
			m.SSRC, m.SSRCRTX = uint32(enc.SSRC), uint32(enc.RTX.SSRC)
		}
		if c := p.counters.lookup(false, uint32(enc.SSRC)); c != nil {
			addOutbound(&m.Out, c, clockRate)
		}
	}
}

func (p *Peer) streamStats(ssrc uint32) *stats.Stats {
	if p.stats == nil {
		return nil
	}
	return p.stats.Get(ssrc)
}

func addInbound(dst *StreamStats, s *stats.Stats) {
	in := s.InboundRTPStreamStats
	dst.Packets += in.PacketsReceived
	dst.Bytes += in.BytesReceived + in.HeaderBytesReceived
	dst.Lost += in.PacketsLost
	dst.NACKs += in.NACKCount
	dst.PLIs += in.PLICount
	dst.FIRs += in.FIRCount
	dst.JitterMs = max(dst.JitterMs, in.Jitter*1000)
	dst.RTTMs = max(dst.RTTMs, float64(s.RemoteOutboundRTPStreamStats.RoundTripTime.Microseconds())/1000)
}

// addOutbound fills the stats of a stream strata sends from its own counters (the peer's NACKs,
// PLIs, FIRs and reception reports are read raw by the counting interceptor).
func addOutbound(dst *StreamStats, c *streamCounters, clockRate uint32) {
	dst.Packets += c.packets.Load()
	dst.Bytes += c.bytes.Load()
	dst.NACKs += uint32(c.nacked.Load())
	dst.PLIs += uint32(c.plis.Load())
	dst.FIRs += uint32(c.firs.Load())
	if !c.reported.Load() {
		return
	}
	dst.Lost += c.reportLost.Load()
	dst.JitterMs = max(dst.JitterMs, float64(c.reportJit.Load())*1000/float64(clockRate))
	dst.RTTMs = max(dst.RTTMs, float64(c.rttMicros.Load())/1000)
}

// codecName gives the lower-case codec name Janus reports ("opus", "vp8", "h264").
func codecName(mime string) string {
	_, name, ok := strings.Cut(mime, "/")
	if !ok {
		name = mime
	}
	return strings.ToLower(name)
}

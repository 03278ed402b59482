package media

import (
	"encoding/base64"
	"net/netip"
	"strconv"
	"strings"
)

// Marshal writes the description as a plain peer reads it, with addr as origin and connection
// address: per m-line the formats with rtpmap and fmtp, a=rtcp (or a=rtcp-mux), a=crypto and the
// direction. An m-line with port 0 is written rejected.
func (p *PlainSDP) Marshal(addr netip.Addr) string {
	ip := "IP4"
	if addr.Is6() && !addr.Is4In6() {
		ip = "IP6"
	}
	var b strings.Builder
	b.WriteString("v=0\r\no=- " + strconv.FormatUint(p.SessionID, 10) + " " + strconv.FormatUint(p.Version, 10) +
		" IN " + ip + " " + addr.String() + "\r\ns=strata\r\nc=IN " + ip + " " + addr.String() + "\r\nt=0 0\r\n")
	for i := range p.Media {
		p.Media[i].marshal(&b)
	}
	return b.String()
}

func (m *PlainMedia) marshal(b *strings.Builder) {
	proto := m.Proto
	if proto == "" {
		proto = "RTP/AVP"
	}
	b.WriteString("m=" + m.Kind + " " + strconv.Itoa(m.Port) + " " + proto)
	if len(m.Codecs) == 0 {
		b.WriteString(" 0\r\n")
		return
	}
	for _, c := range m.Codecs {
		b.WriteString(" " + strconv.Itoa(int(c.PayloadType)))
	}
	b.WriteString("\r\n")
	if m.Port == 0 {
		return
	}
	for _, c := range m.Codecs {
		pt := strconv.Itoa(int(c.PayloadType))
		_, name, _ := strings.Cut(c.MimeType, "/")
		b.WriteString("a=rtpmap:" + pt + " " + name + "/" + strconv.FormatUint(uint64(c.ClockRate), 10))
		if c.Channels > 1 {
			b.WriteString("/" + strconv.Itoa(int(c.Channels)))
		}
		b.WriteString("\r\n")
		if c.SDPFmtpLine != "" {
			b.WriteString("a=fmtp:" + pt + " " + c.SDPFmtpLine + "\r\n")
		}
	}
	if m.RTCPMux {
		b.WriteString("a=rtcp-mux\r\n")
	} else if m.RTCPPort != 0 {
		b.WriteString("a=rtcp:" + strconv.Itoa(m.RTCPPort) + "\r\n")
	}
	for _, c := range m.Crypto {
		b.WriteString("a=crypto:" + strconv.Itoa(c.Tag) + " " + c.Suite + " inline:" + base64.StdEncoding.EncodeToString(c.Key) + "\r\n")
	}
	if m.Direction != "" {
		b.WriteString("a=" + m.Direction + "\r\n")
	}
}

// ReverseDirection is the direction that answers dir (RFC 3264 §6.1).
func ReverseDirection(dir string) string {
	switch dir {
	case "sendonly":
		return "recvonly"
	case "recvonly":
		return "sendonly"
	case "inactive":
		return "inactive"
	}
	return "sendrecv"
}

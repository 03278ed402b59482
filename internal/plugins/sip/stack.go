package sip

import (
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/emiago/sipgo"
	"github.com/emiago/sipgo/sip"

	"github.com/strata-rtc/strata/internal/config"
)

// stack is one handle's SIP user agent: a UDP socket and a TCP listener on the same port of the
// local address, a server for the requests that arrive on them and a client for those the handle
// sends (over UDP from the listening socket itself, so that replies and NAT bindings are symmetric).
type stack struct {
	ua     *sipgo.UserAgent
	srv    *sipgo.Server
	udpCli *sipgo.Client
	tcpCli *sipgo.Client
	udp    net.PacketConn
	tcp    net.Listener
	ip     string
	port   int
}

// handlers are the requests a stack passes to its session.
type handlers interface {
	onInvite(req *sip.Request, tx sip.ServerTransaction)
	onAck(req *sip.Request, tx sip.ServerTransaction)
	onBye(req *sip.Request, tx sip.ServerTransaction)
	onCancel(req *sip.Request, tx sip.ServerTransaction)
	onInfo(req *sip.Request, tx sip.ServerTransaction)
	onMessage(req *sip.Request, tx sip.ServerTransaction)
	onRefer(req *sip.Request, tx sip.ServerTransaction)
	onOptions(req *sip.Request, tx sip.ServerTransaction)
	onNotify(req *sip.Request, tx sip.ServerTransaction)
	// route is the session a request is for: a helper whose call it belongs to, else this one.
	route(req *sip.Request) handlers
}

// newStack binds a port (from cfg.SIPPortRange, or any free one) and starts serving it.
func newStack(cfg config.SIP, ip, userAgent string, h handlers, log *slog.Logger) (*stack, error) {
	udp, tcp, err := bindPair(ip, cfg.SIPPortRange)
	if err != nil {
		return nil, err
	}
	port := udp.LocalAddr().(*net.UDPAddr).Port
	st := &stack{udp: udp, tcp: tcp, ip: ip, port: port}
	if err := st.start(userAgent, cfg.BehindNAT, h, log); err != nil {
		_ = udp.Close()
		_ = tcp.Close()
		return nil, err
	}
	return st, nil
}

func (st *stack) start(userAgent string, natted bool, h handlers, log *slog.Logger) error {
	// sipgo's layers log what peers send wrong (at error level): into the server's logger, whose
	// aggregation keeps a flood of garbage from flooding the log.
	ua, err := sipgo.NewUA(sipgo.WithUserAgent(userAgent), sipgo.WithUserAgentHostname(st.ip),
		sipgo.WithUserAgentTransportLayerOptions(sip.WithTransportLayerLogger(log)),
		sipgo.WithUserAgentTransactionLayerOptions(sip.WithTransactionLayerLogger(log)))
	if err != nil {
		return err
	}
	st.ua = ua
	if st.srv, err = sipgo.NewServer(ua, sipgo.WithServerLogger(log)); err != nil {
		return err
	}
	addr := net.JoinHostPort(st.ip, strconv.Itoa(st.port))
	common := []sipgo.ClientOption{sipgo.WithClientHostname(st.ip), sipgo.WithClientPort(st.port), sipgo.WithClientLogger(log)}
	if natted {
		common = append(common, sipgo.WithClientNAT())
	}
	if st.udpCli, err = sipgo.NewClient(ua, append(common, sipgo.WithClientConnectionAddr(addr))...); err != nil {
		return err
	}
	if st.tcpCli, err = sipgo.NewClient(ua, common...); err != nil {
		return err
	}
	for _, m := range []struct {
		method sip.RequestMethod
		f      func(handlers, *sip.Request, sip.ServerTransaction)
	}{
		{sip.INVITE, handlers.onInvite}, {sip.ACK, handlers.onAck}, {sip.BYE, handlers.onBye},
		{sip.CANCEL, handlers.onCancel}, {sip.INFO, handlers.onInfo}, {sip.MESSAGE, handlers.onMessage},
		{sip.REFER, handlers.onRefer}, {sip.OPTIONS, handlers.onOptions}, {sip.NOTIFY, handlers.onNotify},
	} {
		st.srv.OnRequest(m.method, func(req *sip.Request, tx sip.ServerTransaction) {
			// The handlers read these headers: a request without one is refused here, once.
			if req.CallID() == nil || req.From() == nil || req.To() == nil || req.CSeq() == nil {
				if m.method != sip.ACK {
					_ = tx.Respond(sip.NewResponseFromRequest(req, 400, "Bad Request", nil))
				}
				return
			}
			m.f(h.route(req), req, tx)
		})
	}
	go func() { _ = st.srv.ServeUDP(st.udp) }()
	go func() { _ = st.srv.ServeTCP(st.tcp) }()
	// Requests leave from the UDP socket once the transport layer knows it: wait for that, or the
	// first REGISTER would try to bind the port a second time.
	for range 200 {
		if c, err := ua.TransportLayer().GetConnection("udp", addr); err == nil && c != nil {
			return nil
		}
		time.Sleep(5 * time.Millisecond)
	}
	return errors.New("SIP transport did not start")
}

// client is the client for a request over transport ("udp" or "tcp").
func (st *stack) client(transport string) *sipgo.Client {
	if strings.EqualFold(transport, "tcp") {
		return st.tcpCli
	}
	return st.udpCli
}

// contact is this stack's Contact for user over transport.
func (st *stack) contact(user, transport string, params map[string]string) sip.ContactHeader {
	c := sip.ContactHeader{Address: sip.Uri{Scheme: "sip", User: user, Host: st.ip, Port: st.port}}
	if strings.EqualFold(transport, "tcp") {
		c.Address.UriParams = sip.NewParams()
		c.Address.UriParams.Add("transport", "tcp")
	}
	for k, v := range params {
		if c.Address.UriParams == nil {
			c.Address.UriParams = sip.NewParams()
		}
		c.Address.UriParams.Add(k, v)
	}
	return c
}

func (st *stack) close() {
	if st == nil {
		return
	}
	if st.srv != nil {
		_ = st.srv.Close()
	}
	for _, c := range []*sipgo.Client{st.udpCli, st.tcpCli} {
		if c != nil {
			_ = c.Close()
		}
	}
	if st.ua != nil {
		_ = st.ua.Close()
	}
	_ = st.udp.Close()
	_ = st.tcp.Close()
}

// bindPair binds a UDP socket and a TCP listener on the same port of ip.
func bindPair(ip, portRange string) (net.PacketConn, net.Listener, error) {
	lo, hi, err := config.ParsePortRange(portRange)
	if err != nil {
		return nil, nil, err
	}
	for range 64 {
		port := 0
		if lo != 0 {
			port = int(lo) + rand.IntN(int(hi-lo)+1)
		}
		udp, err := net.ListenPacket("udp", net.JoinHostPort(ip, strconv.Itoa(port)))
		if err != nil {
			continue
		}
		port = udp.LocalAddr().(*net.UDPAddr).Port
		tcp, err := net.Listen("tcp", net.JoinHostPort(ip, strconv.Itoa(port)))
		if err != nil {
			_ = udp.Close()
			continue
		}
		return udp, tcp, nil
	}
	return nil, nil, errors.New("no free SIP port on " + ip + " " + portRange)
}

// firstIPv4 is the host's first non-loopback IPv4 address, as Janus picks its local_ip; 127.0.0.1
// when there is none.
func firstIPv4() string {
	addrs, err := net.InterfaceAddrs()
	if err == nil {
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok && !n.IP.IsLoopback() && n.IP.To4() != nil {
				return n.IP.String()
			}
		}
	}
	return "127.0.0.1"
}

// parseURI parses a sip: URI (Janus's janus_sip_parse_uri: sips only where a proxy is allowed).
func parseURI(s string, sips bool) (sip.Uri, error) {
	var u sip.Uri
	if err := sip.ParseUri(s, &u); err != nil {
		return u, err
	}
	if u.Scheme != "sip" && !(sips && u.Scheme == "sips") {
		return u, fmt.Errorf("not a SIP URI")
	}
	if u.Host == "" {
		return u, fmt.Errorf("no host")
	}
	return u, nil
}

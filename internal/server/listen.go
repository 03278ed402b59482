package server

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/strata-rtc/strata/internal/certs"
	"github.com/strata-rtc/strata/internal/config"
)

type listener struct {
	ln  net.Listener
	srv *http.Server
}

// listenPair binds a transport's plain listener (if plainOn) and its secure one (if enabled), both
// serving h: Janus's model of a plain and a secure port side by side.
func (s *Server) listenPair(name string, plainOn bool, addr, secureName string, secure config.TLSListener, h http.Handler) error {
	if plainOn {
		if err := s.listen(name, addr, h, nil); err != nil {
			return err
		}
	}
	if !secure.Enabled {
		return nil
	}
	src, err := s.certificate(secure)
	if err != nil {
		return fmt.Errorf("%s transport: %w", secureName, err)
	}
	return s.listen(secureName, secure.Listen, h, src)
}

// certificate returns the listener's certificate: its files, or the self-signed certificate every
// self_signed listener shares (a browser that accepted it for the demos then accepts it for wss too).
func (s *Server) certificate(l config.TLSListener) (*certs.Source, error) {
	if !l.SelfSigned {
		src, err := certs.FromFiles(l.CertFile, l.KeyFile)
		if err != nil {
			return nil, err
		}
		s.certFiles = append(s.certFiles, src)
		return src, nil
	}
	if s.selfSigned != nil {
		return s.selfSigned, nil
	}
	hosts := s.cfg.Transports.SelfSignedHosts
	if len(hosts) == 0 {
		hosts = certs.LocalHosts()
	}
	certPEM, keyPEM, err := certs.SelfSigned(hosts, time.Now())
	if err != nil {
		return nil, err
	}
	if s.selfSigned, err = certs.FromPEM(certPEM, keyPEM); err != nil {
		return nil, err
	}
	s.log.Warn("self-signed certificate generated: browsers warn until you accept it; use cert_file and key_file in production",
		"hosts", hosts, "sha256", certs.Fingerprint(s.selfSigned.Leaf()))
	return s.selfSigned, nil
}

// listen binds addr and serves h on it, over TLS when src is set. Every listener gets the configured
// read timeouts; none gets a write timeout, which would cut held long-polls. WebSocket connections
// are hijacked once upgraded: net/http clears the read deadline it set before handing them over, and
// the WebSocket transport keeps its own.
func (s *Server) listen(name, addr string, h http.Handler, src *certs.Source) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("%s transport: %w", name, err)
	}
	to := s.cfg.Transports.Timeouts
	srv := &http.Server{Handler: h, ReadHeaderTimeout: to.ReadHeader, ReadTimeout: to.Read, IdleTimeout: to.Idle}
	if src != nil {
		srv.TLSConfig = &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: src.GetCertificate}
		if name == WSS || name == AdminWSS {
			// HTTP/1.1 only: a WebSocket is an upgraded HTTP/1.1 connection, and a client offered h2 could
			// try WebSocket over HTTP/2, which the transport does not serve.
			srv.TLSNextProto = map[string]func(*http.Server, *tls.Conn, http.Handler){}
		}
	}
	s.listeners[name] = &listener{ln: ln, srv: srv}
	go func() {
		var err error
		if src != nil {
			err = srv.ServeTLS(ln, "", "") // certificates from TLSConfig.GetCertificate
		} else {
			err = srv.Serve(ln)
		}
		if err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.log.Error("listener stopped", "transport", name, "err", err)
		}
	}()
	scheme := "http"
	if src != nil {
		scheme = "https"
	}
	s.log.Info("listening", "transport", name, "addr", ln.Addr().String(), "scheme", scheme)
	return nil
}

// ReloadCertificates reads every certificate that comes from files again (strata serve does this on
// SIGHUP). New connections get the new certificates; open connections keep theirs, so no call is
// dropped. A certificate that fails to load is reported and the one in use stays.
func (s *Server) ReloadCertificates() error {
	var errs []error
	for _, src := range s.certFiles {
		if err := src.Reload(); err != nil {
			errs = append(errs, err)
			continue
		}
		leaf := src.Leaf()
		s.log.Info("certificate reloaded", "subject", leaf.Subject.String(), "not_after", leaf.NotAfter.UTC().Format(time.RFC3339),
			"sha256", certs.Fingerprint(src.Leaf()))
	}
	return errors.Join(errs...)
}

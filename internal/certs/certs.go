// Package certs holds the TLS certificates of strata's secure listeners: read from PEM files and read
// again on demand (SIGHUP), or self-signed at start. crypto/tls asks for the certificate on every
// handshake (GetCertificate), so a reload reaches new connections while open ones, and the calls
// signalled over them, keep the certificate they started with.
package certs

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"time"
)

// Source is one listener's certificate. It is safe for concurrent use.
type Source struct {
	certFile, keyFile string // empty for a certificate given as PEM (generated)
	cur               atomic.Pointer[tls.Certificate]
}

// FromFiles loads a PEM certificate (chain) and key; Reload reads them again.
func FromFiles(certFile, keyFile string) (*Source, error) {
	s := &Source{certFile: certFile, keyFile: keyFile}
	if err := s.Reload(); err != nil {
		return nil, err
	}
	return s, nil
}

// FromPEM holds a fixed certificate (a generated one); Reload keeps it.
func FromPEM(certPEM, keyPEM []byte) (*Source, error) {
	c, err := parse(certPEM, keyPEM)
	if err != nil {
		return nil, err
	}
	s := &Source{}
	s.cur.Store(c)
	return s, nil
}

// Reload reads the files again. On any error the certificate in use stays, so a half-written or
// mismatched pair never takes a listener down.
func (s *Source) Reload() error {
	if s.certFile == "" {
		return nil
	}
	certPEM, err := os.ReadFile(s.certFile)
	if err != nil {
		return err
	}
	keyPEM, err := os.ReadFile(s.keyFile)
	if err != nil {
		return err
	}
	c, err := parse(certPEM, keyPEM)
	if err != nil {
		return fmt.Errorf("%s, %s: %w", s.certFile, s.keyFile, err)
	}
	s.cur.Store(c)
	return nil
}

// FromFile reports whether the certificate comes from files (and Reload reads them).
func (s *Source) FromFile() bool { return s.certFile != "" }

func parse(certPEM, keyPEM []byte) (*tls.Certificate, error) {
	c, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, err
	}
	if c.Leaf == nil { // X509KeyPair fills Leaf since Go 1.23; kept for the log and tests either way
		if c.Leaf, err = x509.ParseCertificate(c.Certificate[0]); err != nil {
			return nil, err
		}
	}
	return &c, nil
}

// Fingerprint is a certificate's SHA-256 fingerprint as browsers show it (AB:CD:...), for the log.
func Fingerprint(c *x509.Certificate) string {
	sum := sha256.Sum256(c.Raw)
	var b strings.Builder
	for i, x := range sum {
		if i > 0 {
			b.WriteByte(':')
		}
		fmt.Fprintf(&b, "%02X", x)
	}
	return b.String()
}

// Leaf is the certificate in use.
func (s *Source) Leaf() *x509.Certificate { return s.cur.Load().Leaf }

// GetCertificate implements tls.Config.GetCertificate.
func (s *Source) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	return s.cur.Load(), nil
}

// Validity of a generated certificate. Browsers cap publicly trusted certificates far lower, but a
// self-signed one is trusted by hand, and a year spares re-accepting it after every restart.
const selfSignedValidity = 365 * 24 * time.Hour

// SelfSigned generates a P-256 certificate and key, in PEM, valid for hosts (DNS names or IP
// addresses) from now on.
func SelfSigned(hosts []string, now time.Time) (certPEM, keyPEM []byte, err error) {
	if len(hosts) == 0 {
		return nil, nil, errors.New("certs: a self-signed certificate needs at least one host")
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{Organization: []string{"strata (self-signed)"}, CommonName: hosts[0]},
		NotBefore:             now.Add(-time.Hour), // a client clock slightly behind still accepts it
		NotAfter:              now.Add(selfSignedValidity),
		KeyUsage:              x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, err
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), nil
}

// LocalHosts are the names a browser may use for this machine: localhost, the host name and the
// address of every interface (loopback included).
func LocalHosts() []string {
	hosts := []string{"localhost"}
	if name, err := os.Hostname(); err == nil && name != "" {
		hosts = append(hosts, name)
	}
	addrs, _ := net.InterfaceAddrs()
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && !n.IP.IsLinkLocalUnicast() {
			hosts = append(hosts, n.IP.String())
		}
	}
	seen := map[string]bool{}
	return slices.DeleteFunc(hosts, func(h string) bool {
		dup := seen[h]
		seen[h] = true
		return dup
	})
}

package certs

import (
	"crypto/x509"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

func TestSelfSignedCoversItsHosts(t *testing.T) {
	now := time.Now()
	certPEM, keyPEM, err := SelfSigned([]string{"strata.test", "192.0.2.7", "::1"}, now)
	if err != nil {
		t.Fatal(err)
	}
	s, err := FromPEM(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	leaf := s.Leaf()
	for _, h := range []string{"strata.test", "192.0.2.7", "::1"} {
		if err := leaf.VerifyHostname(h); err != nil {
			t.Errorf("%s: %v", h, err)
		}
	}
	if err := leaf.VerifyHostname("other.test"); err == nil {
		t.Error("the certificate claims a host it was not made for")
	}
	if !leaf.NotBefore.Before(now) || !leaf.NotAfter.After(now.Add(300*24*time.Hour)) {
		t.Errorf("validity %v to %v", leaf.NotBefore, leaf.NotAfter)
	}
	if _, _, err := SelfSigned(nil, now); err == nil {
		t.Error("a certificate for no host was made")
	}
}

func TestReloadKeepsTheCertificateOnError(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "c.pem"), filepath.Join(dir, "k.pem")
	write := func(cert, key []byte) {
		if err := os.WriteFile(certFile, cert, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(keyFile, key, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	c1, k1, _ := SelfSigned([]string{"a.test"}, time.Now())
	c2, k2, _ := SelfSigned([]string{"b.test"}, time.Now())
	write(c1, k1)
	s, err := FromFiles(certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	if !s.FromFile() || s.Leaf().DNSNames[0] != "a.test" {
		t.Fatalf("loaded %v", s.Leaf().DNSNames)
	}
	write(c2, k1) // a renewal caught half-way: certificate and key do not match
	if err := s.Reload(); err == nil {
		t.Fatal("a mismatched pair was accepted")
	}
	if got, _ := s.GetCertificate(nil); got.Leaf.DNSNames[0] != "a.test" {
		t.Fatal("a failed reload replaced the certificate")
	}
	write(c2, k2)
	if err := s.Reload(); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.GetCertificate(nil); got.Leaf.DNSNames[0] != "b.test" {
		t.Fatal("the reload did not take the new certificate")
	}
	if _, err := FromFiles(filepath.Join(dir, "none.pem"), keyFile); err == nil {
		t.Fatal("a missing file was accepted")
	}
}

func TestLocalHosts(t *testing.T) {
	hosts := LocalHosts()
	if hosts[0] != "localhost" || !slices.Contains(hosts, "127.0.0.1") {
		t.Errorf("LocalHosts() = %v, want localhost and 127.0.0.1 among them", hosts)
	}
	seen := map[string]bool{}
	for _, h := range hosts {
		if seen[h] {
			t.Errorf("%s listed twice", h)
		}
		seen[h] = true
	}
	if len(Fingerprint(mustLeaf(t))) != 32*3-1 {
		t.Error("fingerprint is not 32 colon-separated bytes")
	}
}

func mustLeaf(t *testing.T) *x509.Certificate {
	c, k, _ := SelfSigned([]string{"a.test"}, time.Now())
	s, err := FromPEM(c, k)
	if err != nil {
		t.Fatal(err)
	}
	return s.Leaf()
}

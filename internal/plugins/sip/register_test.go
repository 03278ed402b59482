package sip

import (
	"strconv"
	"testing"
	"time"
)

// TestRegisterWithDigestAndRefresh: strata registers at a sipp registrar that challenges every
// REGISTER (401, digest MD5); the registration, granted for 2 s, is refreshed before it expires
// (a second challenged REGISTER), each success reported as registered with register_sent.
func TestRegisterWithDigestAndRefresh(t *testing.T) {
	for _, cred := range []struct{ name, key, value string }{
		{"secret", "secret", "secret"},
		{"ha1", "ha1_secret", md5hex("alice:strata.test:secret")},
	} {
		t.Run(cred.name, func(t *testing.T) {
			sp := sipp(t, "-sf", "registrar_auth.xml")
			_, s, h := attach(t)
			send(s, "r1", map[string]any{"request": "register", "username": "sip:alice@strata.test",
				cred.key: cred.value, "proxy": "sip:127.0.0.1:" + strconv.Itoa(sp.Port), "display_name": "Alice"})
			if e := h.next(t); e.result() != "registering" || e.tx != "r1" {
				t.Fatalf("first event %+v, want registering", e)
			}
			for i := range 2 {
				e := h.next(t)
				if e.result() != "registered" || e.field("register_sent") != true || e.field("username") != "sip:alice@strata.test" {
					t.Fatalf("event %d: %+v, want registered", i, e.data)
				}
			}
			sp.Wait(t, 28*time.Second)
		})
	}
}

// TestRegisterWrongPassword: a 403 after the challenge is registration_failed with its code.
func TestRegisterWrongPassword(t *testing.T) {
	sp := sipp(t, "-sf", "registrar_auth.xml")
	_, s, h := attach(t)
	send(s, "r1", map[string]any{"request": "register", "username": "sip:alice@strata.test",
		"secret": "wrong", "proxy": "sip:127.0.0.1:" + strconv.Itoa(sp.Port)})
	h.next(t) // registering
	e := h.next(t)
	if e.result() != "registration_failed" || e.field("code") != float64(403) {
		t.Fatalf("got %+v, want registration_failed 403", e.data)
	}
	sp.Wait(t, 28*time.Second)
}

package e2e

import (
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/strata-rtc/strata/internal/config"
	"github.com/strata-rtc/strata/internal/server"
)

// TestDemoWithoutSecureContext opens the demos as someone on another machine would after `make run`:
// at http://<the machine's address>:<port>/, which is not a secure context, so the browser gives the
// page no navigator.mediaDevices. The page must say so, with the HTTPS address of the same page to
// open instead (the server has an HTTPS listener here), and not offer a Start that cannot work.
func TestDemoWithoutSecureContext(t *testing.T) {
	ip := nonLoopbackIPv4(t)
	srv := startStrata(t, func(c *config.Config) {
		c.Transports.HTTP.Listen = ip + ":0"
		c.Transports.HTTP.HTTPS = config.TLSListener{Enabled: true, Listen: ip + ":0", SelfSigned: true}
	})
	_, httpsPort, _ := net.SplitHostPort(srv.Addr(server.HTTPS))
	b := newBrowser(t)
	for _, page := range []string{"echotest.html", "videoroom.html", ""} {
		b.do(10*time.Second, chromedp.Navigate("http://"+srv.HTTPAddr()+"/"+page))
		b.waitFor("the verdict of demos/insecure.js on "+page, `window.strataInsecure !== undefined`, 5*time.Second)
		if secure, _ := eval[bool](b, `window.isSecureContext || navigator.mediaDevices !== undefined`); secure {
			t.Fatalf("%s: Chromium treats http://%s as a secure context; the test cannot show anything", page, ip)
		}
		b.waitFor("the notice on "+page, `document.querySelector('#insecure h2')?.textContent.includes('cannot use your camera or microphone')`, time.Second)
		want := fmt.Sprintf("https://%s:%s/%s", ip, httpsPort, page)
		if href, _ := eval[string](b, `document.querySelector('#insecure a').href`); href != want {
			t.Errorf("%s: the notice points to %q, want %q", page, href, want)
		}
		if page != "" {
			if disabled, _ := eval[bool](b, `document.getElementById('start').disabled`); !disabled {
				t.Errorf("%s: Start is enabled on a page that cannot get the camera", page)
			}
		}
	}
	b.screenshot("insecure-context-notice")
	b.requireCleanConsole("on pages without a secure context")
}

// nonLoopbackIPv4 is an IPv4 address of this machine other than loopback.
func nonLoopbackIPv4(t *testing.T) string {
	t.Helper()
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && !n.IP.IsLoopback() {
			return n.IP.String()
		}
	}
	t.Fatal("this machine has no IPv4 address besides loopback: a non-secure origin cannot be opened")
	return ""
}

package e2e

import (
	"encoding/json"
	"os"
	"testing"
	"time"
)

func TestZZDump(t *testing.T) {
	srv := startAudioBridge(t)
	pages := servePage(t)
	alice, bob := newBrowser(t), newBrowser(t)
	openAudioBridgePage(alice, pages.URL, srv.HTTPAPI)
	openAudioBridgePage(bob, pages.URL, srv.WSAPI)
	a := joinAudioBridge(alice, abDemoRoom, "alice")
	b := joinAudioBridge(bob, abDemoRoom, "bob")
	time.Sleep(2 * time.Second)
	eval[any](bob, `ab.send({ request: 'configure', muted: true })`)
	time.Sleep(500 * time.Millisecond)
	eval[any](bob, `ab.send({ request: 'configure', display: 'bobby' })`)
	time.Sleep(500 * time.Millisecond)
	lp := srv.participants(t, abDemoRoom)
	eval[any](bob, `ab.send({ request: 'leave' })`)
	time.Sleep(1 * time.Second)
	am, _ := eval[any](alice, `ab.messages`)
	bm, _ := eval[any](bob, `ab.messages`)
	ae, _ := eval[any](alice, `ab.events`)
	be, _ := eval[any](bob, `ab.events`)
	out, _ := json.MarshalIndent(map[string]any{"alice": am, "bob": bm, "aliceEv": ae, "bobEv": be, "list": lp, "ids": []string{a, b}}, "", " ")
	os.WriteFile("/tmp/ab-dump-"+srv.Name+".json", out, 0o644)
}

package topo

import (
	"context"
	"os"
	"strings"
	"testing"
)

// needRoot fails (never skips) a test that needs root, except under -short.
func needRoot(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		if testing.Short() {
			t.Skip("needs root; -short")
		}
		t.Fatal("this test builds network namespaces, veths and TUN devices: run it as root")
	}
}

func TestEmulatorAccuracy(t *testing.T) {
	needRoot(t)
	var out strings.Builder
	err := SelfTest(context.Background(), &out)
	t.Log("\n" + out.String())
	if err != nil {
		t.Fatal(err)
	}
}

package topo

import (
	"context"
	"strings"
	"testing"

	"github.com/strata-rtc/strata/internal/emu/emutest"
)

func TestEmulatorAccuracy(t *testing.T) {
	emutest.NeedRoot(t)
	var out strings.Builder
	err := SelfTest(context.Background(), &out)
	t.Log("\n" + out.String())
	if err != nil {
		t.Fatal(err)
	}
}

package sip_test

import (
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/sipptest"
)

// sippDone bounds the wait for a sipp scenario to end once the test has done its part.
const sippDone = 25 * time.Second

// runSipp starts sipp for one call with args (a scenario of ./testdata and options).
func runSipp(t *testing.T, args ...string) *sipptest.Sipp {
	t.Helper()
	return sipptest.Start(t, append([]string{"-m", "1"}, args...)...)
}

package lab

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Per-phase means come from the bins whose start lies in the phase; empty cells count as no
// sample for the delays and as zero for the rates.
func TestPhases(t *testing.T) {
	dir := t.TempDir()
	csv := "time_s,rate_bps,goodput_bps,send_bps,target_bps,cwnd_bytes,queue_delay_ms,rtt_ms,lost_packets\n" +
		"0,1000000,900000,,,,10,210,0\n" +
		"0.5,1000000,900000,,,,30,,0\n" +
		"1,0,0,,,,,,0\n" +
		"1.5,500000,400000,,,,100,300,0\n"
	if err := os.WriteFile(filepath.Join(dir, "flow-a.csv"), []byte(csv), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if code := phasesCmd([]string{dir, "--at", "0s-1s,1s-2s"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	for _, want := range []string{
		"| 0s–1s | a | 1.000 | 0.900 | 20 / 30 | 210 |",
		"| 1s–2s | a | 0.250 | 0.200 | 100 / 100 | 300 |",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("missing %q in\n%s", want, out.String())
		}
	}
}

func TestPhasesBadInput(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{dir, "--at", "60s-10s"}, 2, "FROM < TO"},
		{[]string{dir, "--at", "10-60"}, 2, "with units"},
		{[]string{dir}, 2, "no phases"},
		{[]string{dir, "--at", "0s-1s"}, 1, "no flow-*.csv"},
	} {
		var out, errb bytes.Buffer
		if code := phasesCmd(c.args, &out, &errb); code != c.code || !strings.Contains(errb.String(), c.want) {
			t.Errorf("%v: exit %d, %q; want %d with %q", c.args, code, errb.String(), c.code, c.want)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "flow-x.csv"), []byte("time_s,rate_bps\n0,zz\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if code := phasesCmd([]string{dir, "--at", "0s-1s"}, &out, &errb); code != 1 || !strings.Contains(errb.String(), "flow-x.csv") {
		t.Errorf("a bad CSV: exit %d, %q", code, errb.String())
	}
}

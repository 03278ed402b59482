package sampler

import (
	"net"
	"os"
	"strings"
	"testing"
	"time"
)

func TestParseStatHandlesOddCommandNames(t *testing.T) {
	stat := "4242 (my (odd) proc) S 1 4242 4242 0 -1 4194560 2000 0 0 0 250 75 0 0 20 0 7 0 12345 100000000 2560 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n"
	st, err := ParseStat([]byte(stat))
	if err != nil {
		t.Fatal(err)
	}
	if st.User != 2500*time.Millisecond || st.System != 750*time.Millisecond || st.CPU != 3250*time.Millisecond {
		t.Errorf("cpu user %v system %v total %v", st.User, st.System, st.CPU)
	}
	if st.Threads != 7 || st.RSSBytes != 2560*int64(os.Getpagesize()) {
		t.Errorf("threads %d rss %d", st.Threads, st.RSSBytes)
	}
	for _, bad := range []string{"", "1 (x) S 1 2", "1 (x) S 1 1 1 0 -1 0 0 0 0 0 zz 75 0 0 20 0 7 0 1 1 1"} {
		if _, err := ParseStat([]byte(bad)); err == nil {
			t.Errorf("ParseStat(%q) accepted", bad)
		}
	}
}

// TestReadStatOfThisProcess reads the test process itself: burning CPU must show as CPU time,
// and the memory and thread count must be plausible.
func TestReadStatOfThisProcess(t *testing.T) {
	before, err := ReadStat(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(300 * time.Millisecond)
	x := 0
	for time.Now().Before(deadline) {
		x++
	}
	after := Self().Read()
	if !after.OK {
		t.Fatal("cannot read own stat")
	}
	if after.Stat.CPU-before.CPU < 100*time.Millisecond {
		t.Errorf("300 ms busy loop added only %v of CPU time", after.Stat.CPU-before.CPU)
	}
	if after.Stat.RSSBytes < 1<<20 || after.Stat.Threads < 1 {
		t.Errorf("rss %d threads %d", after.Stat.RSSBytes, after.Stat.Threads)
	}
	if after.NetIsolated {
		t.Error("this process cannot be in a different namespace from itself")
	}
	if p := CPUPercent(Reading{OK: true, Stat: before}, after, 300*time.Millisecond); p <= 0 {
		t.Errorf("cpu percent %.1f", p)
	}
	_ = x
}

func TestParseNetDev(t *testing.T) {
	dev := `Inter-|   Receive                                                |  Transmit
 face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed
    lo:  123456     789    0    0    0     0          0         0   123456     789    0    0    0     0       0          0
 veth0: 1000 10 0 0 0 0 0 0 2000 20 0 0 0 0 0 0
`
	m, err := ParseNetDev([]byte(dev))
	if err != nil {
		t.Fatal(err)
	}
	if m["veth0"] != (NetCounters{RxBytes: 1000, RxPackets: 10, TxBytes: 2000, TxPackets: 20}) || m["lo"].RxBytes != 123456 {
		t.Fatalf("parsed %+v", m)
	}
	if _, err := ParseNetDev([]byte("a\nb\neth0 1 2 3\n")); err == nil {
		t.Error("accepted a line without a colon")
	}
	live, err := ReadNetDev(os.Getpid())
	if err != nil || len(live) == 0 {
		t.Fatalf("own net/dev: %v %v", live, err)
	}
	if _, ok := live["lo"]; !ok {
		t.Errorf("no lo in %v", live)
	}
}

func TestFindPIDByPortFindsThisProcess(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	pid, err := FindPIDByPort(port)
	if err != nil {
		t.Fatal(err)
	}
	if pid != os.Getpid() {
		t.Fatalf("port %d owned by %d, want %d", port, pid, os.Getpid())
	}
	ln.Close()
	if _, err := FindPIDByPort(port); err == nil || !strings.Contains(err.Error(), "nothing listens") {
		t.Fatalf("closed port: %v", err)
	}
}

func TestNoPIDReadsNothing(t *testing.T) {
	if r := New(0).Read(); r.OK {
		t.Fatal("pid 0 gave a reading")
	}
}

func FuzzParsers(f *testing.F) {
	f.Add([]byte("1 (a b) S 1 1 1 0 -1 0 0 0 0 0 1 2 0 0 20 0 3 0 1 1 4 0 0"))
	f.Add([]byte("x\ny\n eth0: 1 2 0 0 0 0 0 0 3 4 0 0 0 0 0 0\n"))
	f.Add([]byte("  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 12345 1"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if st, err := ParseStat(b); err == nil && (st.CPU < 0 || st.CPU != st.User+st.System) {
			t.Fatalf("bad stat %+v", st)
		}
		_, _ = ParseNetDev(b)
		_ = ListeningInodes(b, 8080)
	})
}

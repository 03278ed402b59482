package rtpbridge

import (
	"errors"
	"net"
	"testing"
)

// TestPortsComeFromTheRange: RTP even and RTCP next, inside the range; a range whose pairs are
// taken is reported as ErrNoPorts.
func TestPortsComeFromTheRange(t *testing.T) {
	cfg := Config{LocalIP: "127.0.0.1", PortMin: 41000, PortMax: 41003} // two pairs
	rtp1, rtcp1, err := openPair(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer rtp1.Close()
	defer rtcp1.Close()
	rtp2, rtcp2, err := openPair(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer rtp2.Close()
	defer rtcp2.Close()
	for _, pair := range [][2]int{{port(rtp1), port(rtcp1)}, {port(rtp2), port(rtcp2)}} {
		if pair[0]%2 != 0 || pair[1] != pair[0]+1 || pair[0] < 41000 || pair[1] > 41003 {
			t.Errorf("pair %v", pair)
		}
	}
	if _, _, err := openPair(cfg); !errors.Is(err, ErrNoPorts) {
		t.Errorf("a full range: %v", err)
	}
	if _, _, err := openPair(Config{LocalIP: "127.0.0.1", PortMin: 41001, PortMax: 41001}); !errors.Is(err, ErrNoPorts) {
		t.Errorf("a range without a pair: %v", err)
	}
}

func port(c interface{ LocalAddr() net.Addr }) int { return c.LocalAddr().(*net.UDPAddr).Port }

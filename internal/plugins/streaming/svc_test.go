package streaming_test

import (
	"net"
	"sync"
	"testing"
	"time"
)

// vp9SVCSource sends one VP9 k-SVC picture every 33 ms to port: three spatial layers, one packet
// each (non-flexible mode, 15-bit picture id, TL0PICIDX; a keyframe every 30 pictures), of
// growing sizes so that the layers cost about 50, 150 and 300 kbit/s.
func vp9SVCSource(t *testing.T, port int) {
	c, err := net.DialUDP("udp", nil, &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: port})
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	t.Cleanup(func() { close(stop); wg.Wait(); _ = c.Close() })
	go func() {
		defer wg.Done()
		var seq uint16
		tick := time.NewTicker(33 * time.Millisecond)
		defer tick.Stop()
		buf := make([]byte, 1300)
		for pic := uint16(0); ; pic++ {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			ts := uint32(pic) * 3000
			key := pic%30 == 0
			for sid := range 3 {
				b0 := byte(0x80 | 0x20 | 0x08 | 0x04) // I, L, B, E
				if !key {
					b0 |= 0x40 // P
				}
				marker := byte(0)
				if sid == 2 {
					marker = 0x80
				}
				size := []int{190, 560, 1120}[sid]
				p := buf[:size]
				copy(p, []byte{0x80, marker | 100, byte(seq >> 8), byte(seq), byte(ts >> 24), byte(ts >> 16), byte(ts >> 8), byte(ts),
					0, 0, 0x51, 0x51, b0, 0x80 | byte(pic>>8&0x7f), byte(pic), byte(sid) << 1, byte(pic), 0xAA})
				_, _ = c.Write(p)
				seq++
			}
		}
	}()
}

// spatialLayers counts the VP9 packets the viewer got, per spatial layer id.
func (v *viewer) spatialLayers() map[int]int {
	v.mu.Lock()
	defer v.mu.Unlock()
	out := map[int]int{}
	for sid, n := range v.sids {
		out[sid] = n
	}
	return out
}

// TestSVC: a VP9 SVC stream on one port. A viewer that watches with spatial_layer 0 gets only the
// base layer; one without a cap gets the top layer; configure spatial_layer 1 caps it there.
func TestSVC(t *testing.T) {
	c := startServer(t, nil)
	admin := attach(t, c)
	mp := createRTP(t, admin, map[string]any{"type": "video", "mid": "v", "port": 0, "pt": 100, "codec": "vp9", "svc": true})
	vp9SVCSource(t, mp.port(t, "v", "port"))
	capped := watch(t, c, mp.id, map[string]any{"spatial_layer": 0})
	free := watch(t, c, mp.id, nil)
	deadline := time.Now().Add(15 * time.Second)
	for free.spatialLayers()[2] < 30 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	if l := free.spatialLayers(); l[2] < 30 {
		t.Fatalf("uncapped viewer got layers %v, want the top one", l)
	}
	if l := capped.spatialLayers(); l[0] < 30 || l[1] != 0 || l[2] != 0 {
		t.Errorf("viewer capped at spatial_layer 0 got layers %v", l)
	}
	request(t, free.h, map[string]any{"request": "configure", "mid": "v", "spatial_layer": 1}, nil)
	free.waitEvent(10*time.Second, func(e map[string]any) bool {
		r, _ := e["result"].(map[string]any)
		return r["spatial_layer"] == float64(1)
	})
	time.Sleep(300 * time.Millisecond) // what was in flight
	before := free.spatialLayers()
	after := before
	for deadline := time.Now().Add(10 * time.Second); after[1] < before[1]+30 && time.Now().Before(deadline); {
		time.Sleep(100 * time.Millisecond)
		after = free.spatialLayers()
	}
	if after[2] != before[2] || after[1] < before[1]+30 {
		t.Errorf("after configure spatial_layer 1: layers %v → %v, want layer 1 and no layer 2", before, after)
	}
	// Asking again for the layer received is answered at once, without mid (Janus's shape).
	request(t, free.h, map[string]any{"request": "configure", "mid": "v", "spatial_layer": 1}, nil)
	free.waitEvent(5*time.Second, func(e map[string]any) bool {
		r, _ := e["result"].(map[string]any)
		return len(r) == 1 && r["spatial_layer"] == float64(1)
	})
	// Spatial and temporal changes come in events of their own, the first spatial one with the
	// temporal layer.
	free.mu.Lock()
	defer free.mu.Unlock()
	first := true
	for _, e := range free.events {
		r, _ := e["result"].(map[string]any)
		_, sl := r["spatial_layer"]
		_, tl := r["temporal_layer"]
		if sl && r["mid"] != nil {
			if tl != first {
				t.Errorf("spatial layer event %v: want temporal_layer in the first only", e)
			}
			first = false
		}
	}
}

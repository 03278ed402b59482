package probe

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
)

// BurstResult counts the replies to a burst of requests on one WebSocket.
type BurstResult struct {
	Sent     int `json:"sent"`
	Answered int `json:"answered"` // distinct transactions that got their reply
}

// WSBurst sends n requests on one socket as fast as it can write them, alternating a message to an
// attached handle (an ack and an event) and a keepalive (an ack), while reading every reply; it
// counts the requests answered, waiting until idle for idle.
func WSBurst(ctx context.Context, url, plugin string, n int, idle time.Duration) (BurstResult, error) {
	ws, err := DialWS(ctx, url)
	if err != nil {
		return BurstResult{}, err
	}
	defer ws.Close()
	sid, hid, err := wsEnsure(ws, plugin, 0, 0)
	if err != nil {
		return BurstResult{}, err
	}
	var answered atomic.Int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		seen := make(map[string]bool, n)
		for int(answered.Load()) < n {
			_ = ws.SetReadDeadline(time.Now().Add(idle))
			_, b, err := ws.ReadMessage()
			if err != nil {
				return
			}
			var m struct{ Janus, Transaction string }
			if json.Unmarshal(b, &m) == nil && strings.HasPrefix(m.Transaction, "b") && !asyncKinds[m.Janus] && !seen[m.Transaction] {
				seen[m.Transaction] = true
				answered.Add(1)
			}
		}
	}()
	r := BurstResult{}
	for i := range n {
		req := fmt.Sprintf(`{"janus":"keepalive","transaction":"b%d","session_id":%d}`, i, sid)
		if i%2 == 0 {
			req = fmt.Sprintf(`{"janus":"message","transaction":"b%d","session_id":%d,"handle_id":%d,"body":{"audio":true}}`, i, sid, hid)
		}
		if err := ws.WriteMessage(websocket.TextMessage, []byte(req)); err != nil {
			break
		}
		r.Sent++
	}
	<-done
	r.Answered = int(answered.Load())
	return r, nil
}

// CycleResult is how many session create/attach/destroy cycles completed.
type CycleResult struct {
	Cycles int    `json:"cycles"`
	Failed int    `json:"failed"`
	Err    string `json:"error,omitempty"`
}

// SessionCycles creates a session, attaches a handle to plugin and destroys the session, n times
// over HTTP, from workers clients at once.
func SessionCycles(ctx context.Context, base, plugin string, n, workers int) CycleResult {
	var done, failed atomic.Int64
	var firstErr atomic.Value
	var wg sync.WaitGroup
	next := make(chan struct{})
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range next {
				sid, _, err := httpSession(ctx, base, plugin)
				if err == nil {
					_, m, perr := httpPost(ctx, fmt.Sprintf("%s/%d", base, sid), `{"janus":"destroy","transaction":"d"}`)
					if err = perr; err == nil && m["janus"] != "success" {
						err = fmt.Errorf("destroy: %v", m)
					}
				}
				if err != nil {
					failed.Add(1)
					firstErr.CompareAndSwap(nil, err.Error())
					continue
				}
				done.Add(1)
			}
		}()
	}
	for range n {
		if ctx.Err() != nil {
			break
		}
		next <- struct{}{}
	}
	close(next)
	wg.Wait()
	r := CycleResult{Cycles: int(done.Load()), Failed: int(failed.Load())}
	if e, ok := firstErr.Load().(string); ok {
		r.Err = e
	}
	return r
}

// AbandonedSessions creates n sessions over HTTP and never touches them again; after wait it
// counts how many still exist (a keepalive is acked).
func AbandonedSessions(ctx context.Context, base string, n int, wait time.Duration) (remaining int, err error) {
	ids := make([]uint64, 0, n)
	for range n {
		_, m, err := httpPost(ctx, base, `{"janus":"create","transaction":"c"}`)
		if err != nil {
			return 0, err
		}
		id, err := dataID(m)
		if err != nil {
			return 0, err
		}
		ids = append(ids, id)
	}
	select {
	case <-ctx.Done():
		return 0, ctx.Err()
	case <-time.After(wait):
	}
	for _, id := range ids {
		if httpAlive(ctx, base, id) {
			remaining++
		}
	}
	return remaining, nil
}

// SlowResult is what the server did with clients that send their request body a byte at a time.
type SlowResult struct {
	Conns int `json:"conns"`
	// Cut is how many the server closed within the hold time.
	Cut int `json:"cut"`
	// SlowestCut is when the last of them was closed.
	SlowestCut time.Duration `json:"slowest_cut_ns"`
}

// SlowBody opens conns connections to addr (host:port), sends a POST's headers announcing a 1 kB
// body and then one byte of body every interval, and counts the connections the server closes
// within hold.
func SlowBody(ctx context.Context, addr, path string, conns int, interval, hold time.Duration) (SlowResult, error) {
	r := SlowResult{Conns: conns}
	var mu sync.Mutex
	var wg sync.WaitGroup
	t0 := time.Now()
	ctx, cancel := context.WithTimeout(ctx, hold)
	defer cancel()
	for range conns {
		c, err := (&net.Dialer{}).DialContext(ctx, "tcp", addr)
		if err != nil {
			return r, err
		}
		fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{", path, addr)
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer c.Close()
			if slowlyWrite(ctx, c, interval) {
				mu.Lock()
				r.Cut++
				r.SlowestCut = max(r.SlowestCut, time.Since(t0))
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return r, nil
}

// slowlyWrite writes a byte every interval until ctx ends (false) or the server closes the
// connection (true): a write fails, or a read returns its answer or EOF.
func slowlyWrite(ctx context.Context, c net.Conn, interval time.Duration) bool {
	closed := make(chan struct{})
	go func() {
		buf := make([]byte, 512)
		for {
			if _, err := c.Read(buf); err != nil {
				close(closed)
				return
			}
		}
	}()
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return false
		case <-closed:
			return true
		case <-t.C:
			if _, err := c.Write([]byte(" ")); err != nil {
				return true
			}
		}
	}
}

// NonReaderResult is what happened to a WebSocket client that sends requests and reads nothing.
type NonReaderResult struct {
	Sent      int `json:"sent"`
	Replies   int `json:"replies"`    // read once the client started reading
	CloseCode int `json:"close_code"` // 0: still open; 1006: closed without a close frame
}

// Silent is whether replies were lost without the server saying so (a close frame with a code).
func (r NonReaderResult) Silent() bool {
	return r.Replies < r.Sent && (r.CloseCode == 0 || r.CloseCode == websocket.CloseAbnormalClosure)
}

// WSNonReader sends n keepalives on a socket with a small receive buffer, reads nothing for
// pause, then reads everything there is.
func WSNonReader(ctx context.Context, url, plugin string, n int, pause time.Duration) (NonReaderResult, error) {
	d := websocket.Dialer{Subprotocols: []string{"janus-protocol"}, HandshakeTimeout: 10 * time.Second,
		NetDialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
			if tc, ok := c.(*net.TCPConn); ok {
				_ = tc.SetReadBuffer(4096)
			}
			return c, err
		}}
	ws, _, err := d.DialContext(ctx, url, nil)
	if err != nil {
		return NonReaderResult{}, err
	}
	defer ws.Close()
	sid, _, err := wsEnsure(ws, plugin, 0, 0)
	if err != nil {
		return NonReaderResult{}, err
	}
	r := NonReaderResult{}
	end := time.Now().Add(pause)
	_ = ws.SetWriteDeadline(end)
	for i := range n {
		req := fmt.Sprintf(`{"janus":"keepalive","transaction":"n%d","session_id":%d}`, i, sid)
		if ws.WriteMessage(websocket.TextMessage, []byte(req)) != nil {
			break // the server stopped reading: backpressure
		}
		r.Sent++
	}
	time.Sleep(time.Until(end))
	for {
		_ = ws.SetReadDeadline(time.Now().Add(nonReaderReadTimeout))
		_, b, err := ws.ReadMessage()
		if err != nil {
			if ce, ok := err.(*websocket.CloseError); ok {
				r.CloseCode = ce.Code
			} else if !isTimeout(err) {
				r.CloseCode = websocket.CloseAbnormalClosure
			}
			return r, nil
		}
		if strings.Contains(string(b), `"transaction":"n`) {
			r.Replies++
		}
	}
}

// nonReaderReadTimeout: once a non-reader reads again, TCP may take this long to resume sending
// (after a long zero window the sender's persist timer probes the window seconds apart).
const nonReaderReadTimeout = 30 * time.Second

func isTimeout(err error) bool {
	ne, ok := err.(net.Error)
	return ok && ne.Timeout()
}

package siplab

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"
	"time"
)

// Event is one of baresip's events (ctrl_tcp's JSON).
type Event struct {
	Class     string `json:"class"`
	Type      string `json:"type"`
	Param     string `json:"param"`
	PeerURI   string `json:"peeruri"`
	Direction string `json:"direction"`
	ID        string `json:"id"`
}

type ctrlResponse struct {
	OK    bool   `json:"ok"`
	Data  string `json:"data"`
	Token string `json:"token"`
}

// ctrlConn speaks baresip's ctrl_tcp protocol: JSON objects in netstrings ("len:json,"), commands
// {"command","params","token"} answered by {"response":true,"ok","data","token"}, and events
// {"event":true,...} in between.
type ctrlConn struct {
	c net.Conn

	mu       sync.Mutex
	changed  chan struct{} // closed and replaced whenever something arrives
	events   []Event
	consumed []bool
	resps    map[string]ctrlResponse
	err      error
	token    int
}

func newCtrlConn(c net.Conn) *ctrlConn {
	cc := &ctrlConn{c: c, changed: make(chan struct{}), resps: map[string]ctrlResponse{}}
	go cc.read()
	return cc
}

func (cc *ctrlConn) close() { cc.c.Close() }

func (cc *ctrlConn) read() {
	r := bufio.NewReader(cc.c)
	for {
		msg, err := readNetstring(r)
		cc.mu.Lock()
		if err != nil {
			cc.err = err
		} else {
			cc.take(msg)
		}
		close(cc.changed)
		cc.changed = make(chan struct{})
		cc.mu.Unlock()
		if err != nil {
			return
		}
	}
}

// take files one message (under mu).
func (cc *ctrlConn) take(msg []byte) {
	var head struct {
		Event    bool `json:"event"`
		Response bool `json:"response"`
	}
	if json.Unmarshal(msg, &head) != nil {
		return
	}
	switch {
	case head.Event:
		var ev Event
		if json.Unmarshal(msg, &ev) == nil {
			cc.events = append(cc.events, ev)
			cc.consumed = append(cc.consumed, false)
		}
	case head.Response:
		var resp ctrlResponse
		if json.Unmarshal(msg, &resp) == nil {
			cc.resps[resp.Token] = resp
		}
	}
}

func readNetstring(r *bufio.Reader) ([]byte, error) {
	head, err := r.ReadString(':')
	if err != nil {
		return nil, err
	}
	n, err := strconv.Atoi(head[:len(head)-1])
	if err != nil || n < 0 || n > 1<<20 {
		return nil, fmt.Errorf("bad netstring length %q", head)
	}
	buf := make([]byte, n+1)
	if _, err := io.ReadFull(r, buf); err != nil {
		return nil, err
	}
	if buf[n] != ',' {
		return nil, fmt.Errorf("netstring not terminated by ','")
	}
	return buf[:n], nil
}

func (cc *ctrlConn) command(cmd, params string, timeout time.Duration) (ctrlResponse, error) {
	cc.mu.Lock()
	cc.token++
	token := strconv.Itoa(cc.token)
	cc.mu.Unlock()
	body, _ := json.Marshal(map[string]string{"command": cmd, "params": params, "token": token})
	if _, err := fmt.Fprintf(cc.c, "%d:%s,", len(body), body); err != nil {
		return ctrlResponse{}, err
	}
	var resp ctrlResponse
	err := cc.until(timeout, func() bool {
		r, ok := cc.resps[token]
		resp = r
		return ok
	})
	return resp, err
}

// wait consumes the first unconsumed event of type typ.
func (cc *ctrlConn) wait(typ string, timeout time.Duration) (Event, error) {
	var ev Event
	err := cc.until(timeout, func() bool {
		for i, e := range cc.events {
			if e.Type == typ && !cc.consumed[i] {
				cc.consumed[i] = true
				ev = e
				return true
			}
		}
		return false
	})
	if err != nil {
		return ev, fmt.Errorf("no %s event: %v (events so far: %v)", typ, err, cc.all())
	}
	return ev, nil
}

// until calls done (under mu) whenever a message arrives, until it returns true.
func (cc *ctrlConn) until(timeout time.Duration, done func() bool) error {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		cc.mu.Lock()
		ok, err, ch := done(), cc.err, cc.changed
		cc.mu.Unlock()
		if ok {
			return nil
		}
		if err != nil {
			return fmt.Errorf("control connection: %v", err)
		}
		select {
		case <-ch:
		case <-deadline.C:
			return fmt.Errorf("timed out after %v", timeout)
		}
	}
}

func (cc *ctrlConn) all() []Event {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	return append([]Event(nil), cc.events...)
}

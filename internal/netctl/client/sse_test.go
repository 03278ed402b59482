package client

import (
	"errors"
	"io"
	"strings"
	"testing"
)

func readAll(src string) ([]sseEvent, error) {
	p := newSSEReader(strings.NewReader(src))
	var out []sseEvent
	for {
		e, err := p.next()
		if err != nil {
			return out, err
		}
		out = append(out, e)
	}
}

func TestSSEReader(t *testing.T) {
	src := "retry: 1000\n\n: ping\n\nid: 7\nevent: decision\ndata: {\"a\":\ndata: 1}\n\r\n" +
		"data: plain\r\n\r\nevent: removed\ndata:x\n\nevent: unfinished\ndata: y\n"
	events, err := readAll(src)
	if !errors.Is(err, io.EOF) {
		t.Fatalf("err %v, want EOF", err)
	}
	if len(events) != 3 {
		t.Fatalf("%d events: %+v", len(events), events)
	}
	if e := events[0]; e.ID != "7" || e.Event != "decision" || string(e.Data) != "{\"a\":\n1}" {
		t.Errorf("first %+v", e)
	}
	if e := events[1]; e.Event != "message" || string(e.Data) != "plain" {
		t.Errorf("second %+v", e)
	}
	if e := events[2]; e.Event != "removed" || string(e.Data) != "x" {
		t.Errorf("third %+v", e)
	}
}

func TestSSEReaderBoundsEvents(t *testing.T) {
	huge := "data: " + strings.Repeat("x", maxEventBytes) + "\n\n"
	if _, err := readAll(huge); !errors.Is(err, errEventTooLarge) {
		t.Fatalf("err %v, want errEventTooLarge", err)
	}
	many := strings.Repeat("data: "+strings.Repeat("x", 1<<20)+"\n", 9) + "\n"
	if _, err := readAll(many); !errors.Is(err, errEventTooLarge) {
		t.Fatalf("many lines: err %v, want errEventTooLarge", err)
	}
}

func FuzzSSEReader(f *testing.F) {
	f.Add([]byte("id: 1\nevent: snapshot\ndata: {\"seq\":1,\"decisions\":[]}\n\n"))
	f.Add([]byte("event: decision\ndata: {\"subscription\":\"s\",\"layers\":2}\n\n: ping\n\n"))
	f.Add([]byte("event: removed\ndata: {\"subscription\":\"s\"}\r\n\r\n"))
	f.Add([]byte("data\n\ndata:\n\n:\n\nevent\n\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p := newSSEReader(strings.NewReader(string(data)))
		for i := 0; ; i++ {
			e, err := p.next()
			if err != nil {
				return
			}
			if i > len(data) || len(e.Data) > len(data) {
				t.Fatalf("event %d out of nothing: %+v", i, e)
			}
			// Decoding whatever arrives must not panic either.
			_, _ = decode(e)
		}
	})
}

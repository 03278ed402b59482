package client

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// maxEventBytes bounds one server-sent event (a snapshot of many decisions can be large).
const maxEventBytes = 8 << 20

// sseEvent is one server-sent event.
type sseEvent struct {
	ID, Event string
	Data      []byte
}

// sseReader parses a text/event-stream (the WHATWG "server-sent events" format): lines of
// "field: value", events ended by a blank line, comments starting with ':'. Only the fields the
// controller sends matter (event, data, id); retry and unknown fields are ignored.
type sseReader struct {
	r   *bufio.Reader
	cur sseEvent
	has bool // the current event has a field
	// data says the current event has a data line (a second one is joined with a newline)
	data bool
}

func newSSEReader(r io.Reader) *sseReader { return &sseReader{r: bufio.NewReaderSize(r, 64<<10)} }

var errEventTooLarge = errors.New("server-sent event too large")

// next returns the next event; io.EOF at the end of the stream (an unfinished event is dropped, as
// the format requires).
func (p *sseReader) next() (sseEvent, error) {
	for {
		line, err := p.readLine()
		if err != nil {
			return sseEvent{}, err
		}
		if len(line) == 0 {
			if p.has {
				e := p.cur
				p.cur, p.has, p.data = sseEvent{}, false, false
				if e.Event == "" {
					e.Event = "message"
				}
				return e, nil
			}
			continue
		}
		if line[0] == ':' {
			continue // comment (the controller's heartbeat)
		}
		field, value, _ := bytes.Cut(line, []byte{':'})
		value = bytes.TrimPrefix(value, []byte{' '})
		switch string(field) {
		case "event":
			p.cur.Event, p.has = string(value), true
		case "data":
			if len(p.cur.Data)+len(value) > maxEventBytes {
				return sseEvent{}, errEventTooLarge
			}
			if p.data {
				p.cur.Data = append(p.cur.Data, '\n')
			}
			p.cur.Data = append(p.cur.Data, value...)
			p.data, p.has = true, true
		case "id":
			p.cur.ID, p.has = string(value), true
		}
	}
}

// readLine reads one line without its end (LF or CRLF; the controller sends LF only, so a lone CR
// is not treated as a line end), bounded by maxEventBytes.
func (p *sseReader) readLine() ([]byte, error) {
	var line []byte
	for {
		chunk, err := p.r.ReadSlice('\n')
		if len(line)+len(chunk) > maxEventBytes {
			return nil, errEventTooLarge
		}
		line = append(line, chunk...)
		switch {
		case err == nil:
			line = bytes.TrimSuffix(line[:len(line)-1], []byte{'\r'})
			return line, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		default:
			return nil, err
		}
	}
}

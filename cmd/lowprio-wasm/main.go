//go:build js && wasm

// Command lowprio-wasm is internal/lowprio compiled for browsers (GOOS=js GOARCH=wasm; `make
// wasm` writes web/wasm/lowprio.wasm). The browser then runs the same protocol code as the server
// and the Go client, so the two cannot drift apart. web/lib/lowprio.js loads it and does
// everything that touches the browser: the RTCDataChannel, the clock and the timers.
//
// It sets globalThis.strataLowprio to an object with:
//
//	newSender(opts)    a Sender: write(u8) → bytes taken, writable(), close(), abort(reason),
//	                   onMessage(u8, nowMs) → "" or an error, poll(nowMs, send) → next deadline (ms,
//	                   −1 for none), setCap(windowBytes, bitsPerSecond), stats(), done(), error(),
//	                   free()
//	newReceiver(opts)  a Receiver: onMessage, poll, read(max) → Uint8Array (empty: nothing yet) or
//	                   null at the end, received(), queueDelayMs() (lowprio.QueueMeter), abort(reason),
//	                   error(), free()
//
// opts: {variant: "ledbat" | "ledbat++", targetMs, maxMessage, sendBuffer, recvBuffer,
// initialWindow, idleTimeoutMs}; absent fields take the protocol's defaults. Times are
// performance.now() milliseconds. poll hands each message to send as a view of one buffer that
// the next message overwrites, which is safe with RTCDataChannel.send (it copies).
package main

import (
	"io"
	"math"
	"syscall/js"
	"time"

	"github.com/strata-rtc/strata/cc"
	"github.com/strata-rtc/strata/cc/ledbat"
	"github.com/strata-rtc/strata/internal/lowprio"
)

func main() {
	api := js.Global().Get("Object").New()
	api.Set("version", lowprio.Version)
	api.Set("newSender", js.FuncOf(func(_ js.Value, args []js.Value) any { return newSender(arg(args, 0)) }))
	api.Set("newReceiver", js.FuncOf(func(_ js.Value, args []js.Value) any { return newReceiver(arg(args, 0)) }))
	js.Global().Set("strataLowprio", api)
	select {} // the callbacks above run on this program's goroutines: keep it alive
}

func arg(args []js.Value, i int) js.Value {
	if i < len(args) {
		return args[i]
	}
	return js.Undefined()
}

// A panic in a callback would stop the Go runtime and every transfer of the page with it, and
// js.Value's Float, Int and CopyBytesToGo panic on the wrong type: arguments go through these.

// number is v as a number, or 0 when it is not one.
func number(v js.Value) float64 {
	if v.Type() != js.TypeNumber {
		return 0
	}
	return v.Float()
}

var uint8Array = js.Global().Get("Uint8Array")

// bytesIn reports whether v is a Uint8Array (all the protocol takes).
func bytesIn(v js.Value) bool { return v.Type() == js.TypeObject && v.InstanceOf(uint8Array) }

// object is one JS-facing handle: its methods are js.Funcs, released together by free().
type object struct {
	v     js.Value
	funcs []js.Func
}

func newObject() *object {
	o := &object{v: js.Global().Get("Object").New()}
	o.method("free", func([]js.Value) any {
		for _, f := range o.funcs {
			f.Release()
		}
		o.funcs = nil
		return nil
	})
	return o
}

func (o *object) method(name string, f func(args []js.Value) any) {
	fn := js.FuncOf(func(_ js.Value, args []js.Value) any { return f(args) })
	o.funcs = append(o.funcs, fn)
	o.v.Set(name, fn)
}

// options reads the JS options object; absent fields keep the protocol's defaults.
func options(opts js.Value) (lowprio.Config, *ledbat.Controller, error) {
	cfg := lowprio.DefaultConfig()
	cfg.Transfer = 1 // one transfer per channel: the channel identifies it
	num := func(name string) (float64, bool) {
		if opts.Type() != js.TypeObject {
			return 0, false
		}
		v := opts.Get(name)
		if v.Type() != js.TypeNumber {
			return 0, false
		}
		return v.Float(), true
	}
	for name, dst := range map[string]*int{"maxMessage": &cfg.MaxMessage, "sendBuffer": &cfg.SendBuffer,
		"recvBuffer": &cfg.RecvBuffer, "initialWindow": &cfg.InitialWindow} {
		if v, ok := num(name); ok && v > 0 && v < math.MaxInt32 {
			*dst = int(v)
		}
	}
	if v, ok := num("idleTimeoutMs"); ok && v > 0 {
		cfg.IdleTimeout = millis(v)
	}
	variant := lowprio.VariantLEDBAT
	if opts.Type() == js.TypeObject && opts.Get("variant").Type() == js.TypeString {
		variant = opts.Get("variant").String()
	}
	var target time.Duration
	if v, ok := num("targetMs"); ok && v > 0 {
		target = millis(v)
	}
	ctrl, err := lowprio.NewController(variant, target, cfg.MaxMessage)
	return cfg, ctrl, err
}

func millis(ms float64) time.Duration { return time.Duration(ms * float64(time.Millisecond)) }

func toMillis(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// failed is what a constructor returns on bad options: {error: "..."}.
func failed(err error) js.Value {
	v := js.Global().Get("Object").New()
	v.Set("error", err.Error())
	return v
}

// endpoint holds what Sender and Receiver handles share: message input, Poll and the error.
type endpoint struct {
	*object
	in   []byte   // the incoming message, copied out of JS
	out  js.Value // Uint8Array the outgoing messages are copied into
	send js.Value // poll's callback during the call
	emit func(msg []byte)
}

func newEndpoint(size int) *endpoint {
	e := &endpoint{object: newObject(), in: make([]byte, 0, size),
		out: uint8Array.New(size)}
	e.emit = func(msg []byte) {
		n := js.CopyBytesToJS(e.out, msg)
		// A send that throws loses this message, as the network might; the protocol recovers.
		defer func() { _ = recover() }()
		e.send.Invoke(e.out.Call("subarray", 0, n))
	}
	return e
}

// bind installs onMessage, poll, abort and error over one protocol endpoint.
func (e *endpoint) bind(onMessage func(time.Duration, []byte) error,
	poll func(time.Duration, func([]byte)) time.Duration, abort func(string), errf func() error) {
	e.method("onMessage", func(args []js.Value) any {
		src := arg(args, 0)
		if !bytesIn(src) {
			return "lowprio: onMessage takes a Uint8Array"
		}
		n := src.Get("length").Int()
		if n > cap(e.in) {
			// Larger than any message the protocol sends: the core rejects it by length.
			e.in = make([]byte, n)
		}
		e.in = e.in[:n]
		js.CopyBytesToGo(e.in, src)
		if err := onMessage(millis(number(arg(args, 1))), e.in); err != nil {
			return err.Error()
		}
		return ""
	})
	e.method("poll", func(args []js.Value) any {
		e.send = arg(args, 1)
		if arg(args, 1).Type() != js.TypeFunction {
			return -1
		}
		next := poll(millis(number(arg(args, 0))), e.emit)
		e.send = js.Undefined()
		if next == lowprio.Never {
			return -1
		}
		return toMillis(next)
	})
	e.method("abort", func(args []js.Value) any { abort(arg(args, 0).String()); return nil })
	e.method("error", func([]js.Value) any {
		if err := errf(); err != nil {
			return err.Error()
		}
		return nil
	})
}

func newSender(opts js.Value) js.Value {
	cfg, ctrl, err := options(opts)
	if err != nil {
		return failed(err)
	}
	s := lowprio.NewSender(cfg, ctrl)
	e := newEndpoint(max(cfg.MaxMessage, 512))
	e.bind(s.OnMessage, s.Poll, s.Abort, s.Err)
	var chunk []byte
	e.method("write", func(args []js.Value) any {
		src := arg(args, 0)
		if !bytesIn(src) {
			return 0
		}
		n := min(src.Get("length").Int(), s.Writable())
		if n <= 0 {
			return 0
		}
		if cap(chunk) < n {
			chunk = make([]byte, n)
		}
		js.CopyBytesToGo(chunk[:n], src.Call("subarray", 0, n))
		return s.Write(chunk[:n])
	})
	e.method("writable", func([]js.Value) any { return s.Writable() })
	e.method("close", func([]js.Value) any { s.Close(); return nil })
	e.method("done", func([]js.Value) any { return s.Done() })
	e.method("setCap", func(args []js.Value) any {
		s.SetCap(int(number(arg(args, 0))), cc.Bitrate(number(arg(args, 1))))
		return nil
	})
	e.method("stats", func([]js.Value) any {
		st := s.Stats()
		return map[string]any{
			"acked": float64(st.Acked), "sent": float64(st.Sent), "retransmits": st.Retransmits,
			"timeouts": st.Timeouts, "inFlight": st.InFlight, "cwnd": st.Cwnd,
			"queueDelayMs": toMillis(st.QueueDelay), "rttMs": toMillis(st.RTT),
		}
	})
	return e.v
}

func newReceiver(opts js.Value) js.Value {
	cfg, _, err := options(opts)
	if err != nil {
		return failed(err)
	}
	r := lowprio.NewReceiver(cfg)
	var meter lowprio.QueueMeter
	onMessage := func(now time.Duration, b []byte) error {
		meter.Observe(now, b)
		return r.OnMessage(now, b)
	}
	e := newEndpoint(512) // ACKs and RESETs
	e.bind(onMessage, r.Poll, r.Abort, r.Err)
	e.method("queueDelayMs", func([]js.Value) any { return toMillis(meter.Delay()) })
	var buf []byte
	e.method("read", func(args []js.Value) any { return readInto(r, &buf, int(min(number(arg(args, 0)), 1<<24))) })
	e.method("received", func([]js.Value) any { return float64(r.Received()) })
	return e.v
}

// readInto reads up to limit bytes from r (through the reused *buf) into a fresh Uint8Array:
// empty when nothing is ready, null at the end of the stream or after an error.
func readInto(r io.Reader, buf *[]byte, limit int) any {
	limit = max(limit, 1)
	if cap(*buf) < limit {
		*buf = make([]byte, limit)
	}
	n, err := r.Read((*buf)[:limit])
	if n == 0 && err != nil {
		return nil
	}
	u := uint8Array.New(n)
	js.CopyBytesToJS(u, (*buf)[:n])
	return u
}

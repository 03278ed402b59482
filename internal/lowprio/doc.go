// Package lowprio is the core of strata's low-priority transfers: a reliable, ordered byte
// stream carried in the messages of an unordered, unreliable WebRTC data channel (ordered=false,
// maxRetransmits=0), whose sending window comes from a LEDBAT controller (package cc/ledbat), so
// that a bulk transfer uses spare capacity and yields to media and TCP.
//
// The package is pure and clock-free: every call takes the current time (a time.Duration on the
// caller's monotonic clock) as an argument, and there are no goroutines, timers or I/O. The same
// code therefore runs in the server, the Go client, a browser (compiled to WASM) and trace tests.
// A binding feeds received messages to OnMessage, calls Poll when Poll asked to be called again
// (or after any OnMessage, Write, Read or Close), and sends every message Poll emits.
//
// # Wire format (version 1)
//
// Every message starts with one byte: the version in the high nibble (1) and the type in the low
// nibble, then the transfer id (uint32). All integers are big-endian. Timestamps are the low 32
// bits of a clock in microseconds (they wrap every 71 minutes; only differences are used).
//
//	DATA  (1): vt, id u32, seq u32, sendTS u32, offset u64, payload (≤ MaxMessage−21 bytes)
//	ACK   (2): vt, id u32, cumSeq u32, echoTS u32, recvTS u32, limit u64, n u8, n × (start u32, end u32)
//	FIN   (3): vt, id u32, seq u32, sendTS u32, final length u64
//	RESET (4): vt, id u32, code u16, reason length u8, reason
//
// Sequence numbers count messages (DATA and FIN) from 0; a retransmission keeps its sequence
// number and offset but carries a new timestamp. cumSeq is the lowest sequence number not yet
// received; the SACK ranges [start, end) list up to MaxSACKRanges received runs above it,
// ascending. echoTS is the send timestamp of the newest DATA or FIN received and recvTS the
// receiver's clock when it arrived: the sender's clock minus echoTS is an RTT sample, and
// recvTS − echoTS is a one-way-delay sample whose unknown clock offset cancels against LEDBAT's
// base delay. limit is the receive window as an absolute stream offset: the sender may send
// bytes below it (receive window = limit − the bytes received in order). A zero-length DATA whose
// sequence number was already acknowledged is a window probe: the receiver answers with an ACK.
//
// # State machines
//
// Sender: open (Write buffers up to SendBuffer bytes; Poll sends retransmissions first, then new
// data, paced, while bytes in flight stay ≤ min(LEDBAT cwnd, peer window, external cap)) →
// closing (Close: a FIN follows the last byte) → done (the FIN is acknowledged). Losses come from
// SACKs (three later-sent messages acknowledged, or a RACK-style time threshold of 5/4 RTT) and
// from the RFC 6298 retransmission timeout with exponential backoff. A zero peer window starts a
// persist timer that sends probes; an open stream with nothing to send probes as a keepalive.
// Any state → failed on a forged or malformed message, a peer RESET, Abort, or no message from
// the peer for IdleTimeout while the transfer runs.
//
// Receiver: open (in-order bytes readable with Read, out-of-order ones kept within the window;
// ACK at once on out-of-order, hole-filling, duplicate or FIN messages, otherwise every second
// message or after AckDelay) → finished (FIN received and every byte up to its final length
// read: Read returns io.EOF) or failed (a malformed or impossible message, a peer RESET, Abort,
// or no message for IdleTimeout before the stream ended).
//
// A failed endpoint emits one RESET carrying a code and a reason from its next Poll, and reports
// the error from OnMessage, Err and (receiver) Read; Write then takes nothing. The other transfers
// and the PeerConnection are not affected.
//
// # What cc/ledbat gets
//
// For every ACK that newly acknowledges bytes: Acked (bytes newly acknowledged, cumulatively or
// selectively), InFlight (bytes sent and not yet acknowledged), RTT and the one-way delay. OnLoss
// once per loss-detection batch (the controller halves at most once per RTT), OnTimeout on every
// retransmission timeout.
package lowprio

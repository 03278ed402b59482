// Package rtcpview reads compound RTCP packets (RFC 3550, RFC 4585, RFC 5104, the REMB draft and
// draft-holmer-rmcat-transport-wide-cc-extensions-01) in place, without unmarshalling them into
// structs.
//
// It exists because of what unmarshalling cost: in an audio conference every subscriber's browser
// sends transport-wide congestion control feedback about some 1000 packets a second, and profiles
// of strata under that load put about 17 % of the server's CPU in pion/rtcp's Unmarshal (reached
// through interceptor.Attributes.GetRTCPPackets) and in collecting the garbage it leaves, mostly
// TransportLayerCC.Unmarshal's per-chunk and per-delta allocations. The subscriber side only needs
// to read a few fields of each packet once, so it reads the (already decrypted) bytes directly.
//
// What it guarantees:
//
//   - Nothing allocates: the iterator, every view and every iteration over report blocks, NACKed
//     sequence numbers, FIR entries, REMB SSRCs and TWCC packet statuses work on the caller's
//     buffer and return values; the benchmarks beside the code hold them at 0 allocs/op.
//   - Nothing panics and nothing reads outside the buffer, whatever the input (fuzzed). Malformed
//     input gives one of the Err values; the compound iterator stops at the first sub-packet whose
//     framing is wrong, after yielding the well-formed ones before it.
//   - A view that parsed without error is consistent: ParseTWCC has already checked every status
//     chunk and every receive delta, so iterating its statuses cannot fail halfway.
//   - Views alias the input: they are valid while the caller keeps the bytes unchanged.
//
// Where pion/rtcp accepts or rejects differently, this package follows the RFCs and libwebrtc: it
// strips padding instead of parsing it as payload, rejects the reserved TWCC status symbol 3,
// needs no receive deltas for status-vector symbols beyond the status count, and reads a REMB
// whatever its media SSRC. fuzz_test.go lists every difference and checks everything else
// against pion/rtcp.
package rtcpview

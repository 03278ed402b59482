// Package media is strata's one home for codec and SDP knowledge. It holds the codec table (what
// the forwarding code asks about a codec is a method of Codec: SVC or simulcast-only, whether a
// dropped picture keeps its picture id, clock rate, MIME type), the matching of codecs between an
// offer, an answer and Pion's media engine (PickCodec, MatchCodec, RTXFor, SameFormat, simulcast
// rids), a zero-copy view of an RTP header, one parse function per codec that turns a payload into
// Flags (keyframe, start/end of frame, spatial and temporal layer, switch points, where the picture
// ids sit), the AV1 Dependency Descriptor, the audio level extension, a fixed-slot packet cache for
// retransmissions, and a rewriter that makes packets from several sources (simulcast layers,
// pauses, dropped layers) look like one continuous stream.
//
// The packet functions work on caller-owned buffers and allocate nothing per packet; time is always
// an argument. The forwarding code in package sfu asks these functions about a packet and a codec
// and never looks at codec bytes or switches on codecs itself.
package media

// Package media holds strata's codec-agnostic RTP building blocks: a zero-copy view of an RTP header,
// one parse function per codec that turns a payload into Flags (keyframe, start/end of frame,
// spatial and temporal layer, switch points, where the picture ids sit), the AV1 Dependency
// Descriptor, the audio level extension, a fixed-slot packet cache for retransmissions, and an
// in-place rewriter that makes packets from several sources (simulcast layers, pauses, dropped
// layers) look like one continuous stream.
//
// Everything here works on caller-owned buffers and allocates nothing per packet; time is always an
// argument. The forwarding code in package sfu asks these functions about a packet and never looks at
// codec bytes itself.
package media

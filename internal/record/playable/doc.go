// Package playable turns the RTP packets of one participant's tracks into one file an ordinary
// player reads: WebM (VP8, VP9, AV1 and Opus), Ogg (Opus) or MP4 (H.264, VP9, AV1 and Opus). It
// is the one path both `strata rec convert` (packets read back from .mjr recordings) and the live
// recorder (packets as they arrive) take, so a recording converted later and one written live
// come out the same.
//
// A Writer takes each track's packets with their arrival time and, per track:
//
//   - puts them back in order by sequence number within a window (ReorderDelay of arrival time,
//     at most MaxHeld packets), dropping and counting those later than that or repeated;
//   - depacketizes them into frames (VP8, VP9: the payload descriptors removed, a VP9 picture's
//     spatial layers packed into a superframe; H.264: STAP-A and
//     FU-A undone into Annex-B NAL units; AV1: the aggregation undone into the low-overhead
//     bitstream; Opus: one packet is one frame), a frame being the packets of one timestamp;
//   - for video, waits for a keyframe at the start and after every gap (a lost packet would leave
//     a frame the decoder cannot use, and every frame after it until the next keyframe), counting
//     the frames it skips;
//   - for Opus, fills a gap in the timestamps with 20 ms frames of silence, as janus-pp-rec does,
//     so the file's timeline stays the recording's;
//   - maps the RTP timestamps onto one clock shared by the tracks: a track starts at the arrival
//     time of its first packet, relative to the first packet of any track, and advances with its
//     RTP timestamps. So audio and video start where they started, and stay together.
//
// Frames of the tracks are interleaved by time and handed to the container's muxer. The header of
// a file is written once every video track has its first keyframe (its size and, for H.264 and
// AV1, its parameter sets come from it); until then the audio frames wait, at most MaxPending.
// Nothing is transcoded.
package playable

// Package record writes Janus's per-stream recordings: the .mjr files of Janus's recorder
// (src/record.c, format "MJR00002"), which Janus's janus-pp-rec turns into .opus, .wav, .webm or
// .mp4 files. A recording is one track of one publisher; recording audio and video takes two.
//
// MJR is an sfu.Sink: a plugin records a published track by adding one to the track's
// sfu.Receiver, and stops by removing it and calling Close. Nothing about recording touches the
// media path beyond a copy: WriteRTP copies the packet into a fixed ring of preallocated slots and
// returns; a goroutine per recording takes the packets out, renumbers them and writes them through
// a buffer to the file. A disk too slow to keep up fills the ring, and what does not fit is dropped
// and counted (Stats), never waited for.
//
// # The format
//
// A recording starts with the 8 bytes "MJR00002". With the first packet comes the info header: a
// 2-byte big-endian length and a JSON object, {"t": "a" (audio) or "v" (video), "c": the codec as
// Janus names it, optionally "f": the fmtp, "d": a description, "x": the header extensions by id,
// "s": when the recording was created and "u": when its first packet arrived, both µs since the
// Unix epoch}. Then every packet is a frame: "MEET", a 4-byte big-endian time in milliseconds
// since the first packet, a 2-byte big-endian length, and the RTP packet as received, header
// extensions included. A recording closed before any packet holds the 8 bytes only, as Janus's.
//
// The first packets are held for 100 ms and written in sequence order, so that one the network
// delayed past the first to arrive (often the start of the first keyframe) is not lost to the
// renumbering, which starts from the first packet written.
//
// As Janus's recorder does, the packets' sequence numbers and timestamps are rewritten to continue
// across a change of SSRC and across a pause (Resync), the timestamp advancing by the time that
// passed; unlike Janus's, the SSRC is rewritten too, to the first packet's, because janus-pp-rec
// drops every packet whose SSRC is not the first one it reads.
//
// A Session records one participant for the plugins: a .mjr file per track, always, and, when
// the configuration's recording.playable says so, one file players read (WebM, Ogg or MP4, audio
// and video together and in sync) written beside them as the media arrives, through the pipeline
// of package playable. Its tracks are sinks too, with the same ring discipline as MJR.
//
// MJRReader reads recordings back, frame by frame: strata's, Janus's, and those of Janus's older
// formats (MJR00001, whose frames have no time, and the one before it, with no JSON header).
package record

// Package audio is the audio core of the audio bridge (an Opus MCU): Opus through the real libopus,
// a jitter buffer per participant, the mixer (the full mix and each talker's mix-minus-self), the
// encoding plan that shares one encoding of the full mix among every listener who contributes
// nothing, talking detection from RFC 6464 audio levels, and a Goertzel tone detector for tests.
// G.711 (PCMU, PCMA) participants decode and encode through the same Input and FrameDecoder, with
// 8 kHz resampled to and from the room's rate. Sink is the sfu.Sink that feeds a participant's
// Receiver into its Input and talk detector, so the audio bridge never parses a packet.
//
// The algorithms are pure: no clocks, no sockets, no goroutines. The caller ticks the mixer every
// 20 ms and passes packets in; everything sized per participant is allocated when the participant
// is created, so a tick allocates nothing.
//
// Two file components are the exception, each with a goroutine of its own so that the mixer never
// waits on the disk. FileSource plays an Ogg/Opus announcement (Janus's play_file): libopusfile
// decodes at 48 kHz, a windowed-sinc filter brings it down to the room's rate, and the frames are
// decoded ahead into a small ring that Next reads without blocking. WAVRecorder records the room's
// mix (Janus's room recording) as a 16-bit PCM WAVE file: Write copies the frame into a ring and a
// writer goroutine writes it out, dropping (and counting) frames if the disk falls behind.
//
// # The Opus binding
//
// Opus is github.com/hraban/opus, a cgo binding of the system libopus (Debian libopus-dev) and
// libopusfile (libopusfile-dev, for Ogg/Opus announcement files), pinned in go.mod. Chosen because
// it is maintained (commits and CI on current Go in 2026; gopkg.in/hraban/opus.v2 is the same
// code frozen in 2023), links the distribution's libopus rather than vendoring an old copy
// (layeh.com/gopus bundles Opus 1.1.2 and is unmaintained since 2021), exposes what a conference
// bridge needs (in-band FEC decoding, PLC, bitrate, complexity, FEC, expected loss, DTX, reset), and
// decodes into caller-owned buffers, so a steady-state frame allocates nothing. Pure-Go Opus
// implementations were not considered: the aim is libopus's quality and speed.
package audio

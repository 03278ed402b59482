// Package recording holds the videoroom's recording tests, end to end through the Janus API: a
// publisher's recordings played back with janus-pp-rec, ffprobe and ffmpeg, enable_recording, and a
// full disk. They run as their own package so that the videoroom's own tests stay within their
// time budget (these send 10 s of real media).
package recording

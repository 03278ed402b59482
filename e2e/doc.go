// Package e2e holds strata's end-to-end tests: each test starts a complete strata server in-process on
// free loopback ports and one or two real headless Chromiums (each with a fake camera and
// microphone), then drives web pages through a whole call and checks, from the browsers' own
// getStats, that video is decoded (and audio, with energy). The pages under test are strata's
// echotest, videoroom and audiobridge demos (web/) and test pages that use the unmodified janus.js
// from Debian's libjs-janus-gateway package (the echotest; the videoroom with simulcast and substream
// switching; and a page hosting several videoroom participants at once, for VP9 SVC, H.264, AV1,
// joinandconfigure, switch, moderate, ICE restarts and talking events; the echotest with
// multichannel Opus, as Janus's multiopus demo negotiates it; the audiobridge as Janus's demo
// negotiates it). Janus's own admin page and audiobridge demo (Debian's janus-demos) run against
// strata unmodified.
//
// A page served from another origin publishes the fake camera with WHIP and plays it back with WHEP
// (fetch and RTCPeerConnection only, a bearer token, so CORS preflights are exercised; docs/WHIP.md).
//
// The streaming tests feed mountpoints with ffmpeg over RTP and watch them with janus.js, Janus's own
// streaming demo and strata's (docs/STREAMING.md); with STRATA_E2E_STREAMING=janus they run against
// Debian's Janus 1.1.2.
//
// The audiobridge tests run against Debian's Janus 1.1.2 instead with STRATA_E2E_AUDIOBRIDGE=janus
// (started on free ports by the test), which shows that what they expect is what Janus does.
//
// The low-priority transfer tests run lib/lowprio.js (internal/lowprio as WebAssembly: `make wasm`
// first) between two Chromiums, against strata's service through its demo page, and between two
// Chromiums in network namespaces joined by the emulator's 2 Mbit/s link (root).
//
// The tests need /usr/bin/chromium, /usr/share/javascript/janus-gateway/janus.js and
// /usr/share/janus/demos; `make test` installs them. Without them the tests fail (they never skip).
//
// Set STRATA_E2E_ARTIFACTS to a directory to keep a screenshot of each page in mid-call.
package e2e

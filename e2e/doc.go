// Package e2e holds strata's end-to-end tests: each test starts a complete strata server in-process on
// free loopback ports and a real headless Chromium (with a fake camera and microphone), then drives a
// web page through a whole call and checks, from the browser's own getStats, that echoed video is
// decoded. The pages under test are strata's echotest demo (web/) and a test page that uses the
// unmodified janus.js from Debian's libjs-janus-gateway package.
//
// The tests need /usr/bin/chromium and /usr/share/javascript/janus-gateway/janus.js; `make test`
// installs both. Without them the tests fail (they never skip).
//
// Set STRATA_E2E_ARTIFACTS to a directory to keep a screenshot of each page in mid-call.
package e2e

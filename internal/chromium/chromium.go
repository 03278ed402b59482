// Package chromium is how strata's tools (the end-to-end tests, the uplink benchmark, the
// emulator's browser flows) launch headless Chromium through chromedp: the options they share,
// and running it inside a network namespace.
package chromium

import (
	"os/exec"
	"strconv"
	"syscall"

	"github.com/chromedp/chromedp"
)

// Path is where Debian's chromium package installs the browser.
const Path = "/usr/bin/chromium"

// Options launch the Chromium at path headless (no sandbox, no GPU) with a fresh profile in
// profileDir, fake camera and microphone granted without a prompt, muted, and without the
// background traffic (component updates, sync, QUIC) that would share the network with the media
// under test. Later options override these.
func Options(path, profileDir string) []chromedp.ExecAllocatorOption {
	return []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.Flag("headless", "new"),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("use-fake-ui-for-media-stream", true),
		chromedp.Flag("use-fake-device-for-media-stream", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("mute-audio", true),
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.UserDataDir(profileDir),
	}
}

// FakeCameraFPS sets the fake camera's frame rate (Chromium's default is 20).
func FakeCameraFPS(fps float64) chromedp.ExecAllocatorOption {
	return chromedp.Flag("use-fake-device-for-media-stream", "fps="+strconv.FormatFloat(fps, 'f', -1, 64))
}

// FullRate keeps the tab's timers and renderer at full rate. A headless tab is never hidden,
// but a measurement must not depend on that.
func FullRate(a *chromedp.ExecAllocator) {
	chromedp.Flag("disable-background-timer-throttling", true)(a)
	chromedp.Flag("disable-renderer-backgrounding", true)(a)
}

// Autoplay lets a page play media without a user's click, as a real user's click would.
var Autoplay = chromedp.Flag("autoplay-policy", "no-user-gesture-required")

// HostCandidates keeps the host candidates' real addresses. A page that never asks for the
// camera would hide them behind mDNS names, which nothing in a lab namespace resolves.
var HostCandidates = chromedp.Flag("disable-features", "WebRtcHideLocalIpsWithMdns")

// InNamespace runs the Chromium at path inside network namespace ns. `ip netns exec` execs it in
// place, so the PID chromedp holds (and kills) is Chromium's. It leads its own process group, so
// its owner can kill it and every process it forked by that id, and it gets SIGKILL if the
// thread that started it exits, so it never outlives its owner.
func InNamespace(ns, path string) chromedp.ExecAllocatorOption {
	return chromedp.ModifyCmdFunc(func(cmd *exec.Cmd) {
		wrapped := exec.Command("ip", append([]string{"netns", "exec", ns, path}, cmd.Args[1:]...)...)
		cmd.Path, cmd.Args = wrapped.Path, wrapped.Args
		if cmd.SysProcAttr == nil {
			cmd.SysProcAttr = &syscall.SysProcAttr{}
		}
		cmd.SysProcAttr.Setpgid = true
		cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	})
}

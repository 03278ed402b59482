package sfuflow

import (
	"context"
	"path/filepath"
	"syscall"

	"github.com/strata-rtc/strata/internal/emu/endpoint"
	"github.com/strata-rtc/strata/internal/rig"
)

// Ports inside the SFU's host namespace (its own: nothing else listens there).
const (
	apiPort    = 8088
	netctlPort = 9080
)

// startProcess runs the binary with args in h's namespace, its output to dir/name.log. It is
// killed with us if we die (rig.StartCommand says how), and ended by its PID.
func startProcess(h endpoint.Host, dir, name, bin string, args ...string) (*rig.Process, error) {
	// The process lives as long as the run, not as the context of the call that starts it.
	cmd := h.Command(context.Background(), bin, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	return rig.StartCommand(name, cmd, filepath.Join(dir, name+".log"))
}

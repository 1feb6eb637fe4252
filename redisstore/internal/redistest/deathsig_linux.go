package redistest

import (
	"os/exec"
	"syscall"
)

// setDeathSignal has the kernel kill redis-server if the test binary dies
// without cleaning up (a timeout panic, a kill), so no server is left behind.
func setDeathSignal(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

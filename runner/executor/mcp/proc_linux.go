//go:build linux

package mcp

import (
	"os/exec"
	"syscall"
)

// isolate puts a stdio server in its own process group, so killGroup reaches
// the programs it starts (npx, shells), and has the kernel kill it if the
// runner dies without closing it.
func isolate(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// killGroup kills what is left of the server's process group.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil && cmd.Process.Pid > 0 {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}

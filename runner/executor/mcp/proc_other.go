//go:build !linux

package mcp

import "os/exec"

// isolate is a no-op off Linux: the SDK's own shutdown (close stdin,
// SIGTERM, SIGKILL) still ends the direct child.
func isolate(*exec.Cmd) {}

func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = cmd.Process.Kill()
	}
}

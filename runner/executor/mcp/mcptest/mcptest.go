// Package mcptest locates and starts the reference MCP server,
// @modelcontextprotocol/server-everything, which `make deps` installs from
// npm into the repository's node_modules (version pinned by package.json and
// package-lock.json). Tests, end-to-end tests and the demo use it as a real
// MCP server over stdio and streamable HTTP.
package mcptest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// EnvPath overrides where the server's entry point (dist/index.js) is.
const EnvPath = "COWBOY_MCP_EVERYTHING"

// Package is the npm package and the version package.json pins.
const Package = "@modelcontextprotocol/server-everything@2026.8.31"

// relPath is the entry point below the repository root.
const relPath = "node_modules/@modelcontextprotocol/server-everything/dist/index.js"

// Path returns the server's entry point: $COWBOY_MCP_EVERYTHING, else
// node_modules/… below the module root found by walking up from the working
// directory. The error says how to install it.
func Path() (string, error) {
	if p := os.Getenv(EnvPath); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("mcptest: %s=%s: %w (unset it to use the copy `make deps` installs in node_modules)", EnvPath, p, err)
		}
		return p, nil
	}
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("mcptest: %w", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			p := filepath.Join(dir, relPath)
			if _, err := os.Stat(p); err != nil {
				return "", fmt.Errorf("mcptest: %s is not installed at %s: run `make deps` (npm installs it from package.json), or set %s to its dist/index.js", Package, p, EnvPath)
			}
			return p, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("mcptest: no go.mod above the working directory; set %s to %s's dist/index.js", EnvPath, Package)
		}
		dir = parent
	}
}

// Node returns the node binary.
func Node() (string, error) {
	p, err := exec.LookPath("node")
	if err != nil {
		return "", fmt.Errorf("mcptest: node is not installed (run `make deps`): %w", err)
	}
	return p, nil
}

// StdioCommand is the command and arguments that run the server over stdio.
func StdioCommand() (string, []string, error) {
	node, err := Node()
	if err != nil {
		return "", nil, err
	}
	p, err := Path()
	if err != nil {
		return "", nil, err
	}
	return node, []string{p, "stdio"}, nil
}

// HTTPServer is a running streamable-HTTP server-everything process.
type HTTPServer struct {
	// URL is the MCP endpoint, http://127.0.0.1:PORT/mcp.
	URL  string
	Port int
	cmd  *exec.Cmd
	done chan struct{}
	once sync.Once
}

// StartHTTP starts server-everything in streamableHttp mode on port (0: a
// free port) and waits until it listens. Stop it with Stop.
func StartHTTP(ctx context.Context, port int) (*HTTPServer, error) {
	node, err := Node()
	if err != nil {
		return nil, err
	}
	p, err := Path()
	if err != nil {
		return nil, err
	}
	if port == 0 {
		if port, err = freePort(); err != nil {
			return nil, err
		}
	}
	cmd := exec.Command(node, p, "streamableHttp")
	cmd.Env = append(os.Environ(), "PORT="+strconv.Itoa(port))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Stdout = io.Discard
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("mcptest: start %s: %w", Package, err)
	}
	s := &HTTPServer{URL: fmt.Sprintf("http://127.0.0.1:%d/mcp", port), Port: port, cmd: cmd, done: make(chan struct{})}
	ready := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		var lines []string
		signalled := false
		for sc.Scan() {
			line := sc.Text()
			if !signalled {
				lines = append(lines, line)
				if strings.Contains(line, "listening on port") {
					ready <- nil
					signalled = true
				} else if strings.Contains(line, "Failed") || strings.Contains(line, "Error") {
					ready <- errors.New(strings.Join(lines, "\n"))
					signalled = true
				}
			}
		}
		if !signalled {
			ready <- fmt.Errorf("exited before listening: %s", strings.Join(lines, "\n"))
		}
	}()
	go func() { _ = cmd.Wait(); close(s.done) }()
	select {
	case err := <-ready:
		if err != nil {
			s.Stop()
			return nil, fmt.Errorf("mcptest: %s on port %d: %w", Package, port, err)
		}
	case <-ctx.Done():
		s.Stop()
		return nil, ctx.Err()
	case <-time.After(30 * time.Second):
		s.Stop()
		return nil, fmt.Errorf("mcptest: %s did not listen on port %d within 30s", Package, port)
	}
	return s, nil
}

// Kill ends the server abruptly (SIGKILL to its process group).
func (s *HTTPServer) Kill() {
	s.once.Do(func() {
		_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
	})
	<-s.done
}

// Stop ends the server. Safe to call more than once.
func (s *HTTPServer) Stop() { s.Kill() }

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("mcptest: free port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

package pvm

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// zygote is one pre-warmed Python process that forks a child per call.
type zygote struct {
	id   int
	log  *slog.Logger
	mu   sync.Mutex // serialises control messages and restarts
	cmd  *exec.Cmd
	ctl  *os.File
	done chan struct{} // closed when the process exits
	wg   *sync.WaitGroup
}

// zygoteSpec is what starting a zygote needs.
type zygoteSpec struct {
	python  string
	srcDir  string
	sandbox bool
	log     *slog.Logger
	wg      *sync.WaitGroup
}

func startZygote(id int, s *zygoteSpec) (*zygote, error) {
	z := &zygote{id: id, log: s.log.With("zygote", id), wg: s.wg}
	if err := z.start(s); err != nil {
		return nil, err
	}
	return z, nil
}

func (z *zygote) start(s *zygoteSpec) error {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("pvm: control socketpair: %w", err)
	}
	ours := os.NewFile(uintptr(fds[0]), "pvm-ctl")
	theirs := os.NewFile(uintptr(fds[1]), "pvm-ctl-child")
	defer theirs.Close()

	cmd := exec.Command(s.python, "-S", "-s", "-B", "-P", "-u", filepath.Join(s.srcDir, "zygote.py"), s.srcDir)
	cmd.Env = []string{"PYTHONHASHSEED=0"}
	cmd.Dir = s.srcDir
	cmd.ExtraFiles = []*os.File{theirs}
	// No Pdeathsig: it fires when the creating OS *thread* exits, which Go may
	// do while the process lives. If Go dies, the control socket reaches EOF
	// and the zygote and its spare children exit on their own.
	attr := &syscall.SysProcAttr{Setpgid: true}
	if s.sandbox {
		attr.Cloneflags = syscall.CLONE_NEWNET | syscall.CLONE_NEWNS | syscall.CLONE_NEWIPC | syscall.CLONE_NEWUTS
	}
	cmd.SysProcAttr = attr
	stderr, err := cmd.StderrPipe()
	if err != nil {
		ours.Close()
		return fmt.Errorf("pvm: zygote stderr: %w", err)
	}
	if err := cmd.Start(); err != nil {
		ours.Close()
		return fmt.Errorf("pvm: start zygote: %w", err)
	}
	z.cmd, z.ctl, z.done = cmd, ours, make(chan struct{})
	done := z.done
	z.wg.Add(2)
	go func() {
		defer z.wg.Done()
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			z.log.Warn("zygote stderr", "line", sc.Text())
		}
	}()
	go func() {
		defer z.wg.Done()
		err := cmd.Wait()
		z.log.Debug("zygote exited", "err", err)
		close(done)
	}()
	return nil
}

func (z *zygote) alive() bool {
	select {
	case <-z.done:
		return false
	default:
		return true
	}
}

// spawn asks the zygote to fork a child serving the call on fd.
func (z *zygote) spawn(s *zygoteSpec, req []byte, fd int) error {
	z.mu.Lock()
	defer z.mu.Unlock()
	if !z.alive() {
		z.ctl.Close()
		z.log.Warn("restarting zygote")
		if err := z.start(s); err != nil {
			return err
		}
	}
	rights := unix.UnixRights(fd)
	if err := unix.Sendmsg(int(z.ctl.Fd()), req, rights, nil, 0); err != nil {
		return fmt.Errorf("pvm: send call to zygote: %w", err)
	}
	return nil
}

// stop closes the control socket (the zygote exits on EOF) and kills it.
func (z *zygote) stop(ctx context.Context) error {
	z.mu.Lock()
	defer z.mu.Unlock()
	z.ctl.Close()
	select {
	case <-z.done:
		return nil
	case <-ctx.Done():
	}
	if z.cmd.Process != nil {
		_ = z.cmd.Process.Kill()
	}
	<-z.done
	if ctx.Err() != nil && !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return ctx.Err()
	}
	return nil
}

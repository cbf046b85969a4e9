"""PVM zygote: imports everything once, then forks one child per call.

fd 3 is a SOCK_SEQPACKET control socket from Go. Each control message is a
CBOR map {"dir": scratch dir, "sandbox": bool, "rl": {rlimits}} carrying one
SCM_RIGHTS fd: the call socket. The zygote keeps SPARE children forked
ahead of time; each waits on the control socket, and the one that receives
a message tells the zygote (pipe) to fork a replacement, hardens itself
(closes every other fd, chroot into the scratch dir, unique uid, rlimits,
no_new_privs) and serves exactly one call on that socket, then exits. Fork
cost is therefore off the call's critical path.
"""

import sys

sys.path.insert(0, sys.argv[1])
sys.dont_write_bytecode = True

import ctypes  # noqa: E402
import gc  # noqa: E402
import os  # noqa: E402
import resource  # noqa: E402
import signal  # noqa: E402
import socket  # noqa: E402
import struct as _st  # noqa: E402

import _pvm_cbor  # noqa: E402
import _pvm_env  # noqa: E402,F401
import _pvm_worker  # noqa: E402
import encodings.idna  # noqa: E402,F401
import encodings.latin_1  # noqa: E402,F401
import string  # noqa: E402,F401

_LIBC = ctypes.CDLL(None, use_errno=True)
PR_SET_NO_NEW_PRIVS = 38
PR_SET_PDEATHSIG = 1


# x86_64 syscalls a call child never needs; they fail with EPERM.
_DENY_X86_64 = (
    59, 322,                      # execve, execveat
    41, 42, 43, 49, 50, 288, 53,  # socket, connect, accept, bind, listen, accept4, socketpair
    56, 57, 58, 435,              # clone, fork, vfork, clone3
    101, 310, 311,                # ptrace, process_vm_readv/writev
    165, 166, 155, 161,           # mount, umount2, pivot_root, chroot
    308, 272,                     # setns, unshare
    246, 320, 175, 313, 176,      # kexec_load, kexec_file_load, init/finit/delete_module
    321, 298, 323,                # bpf, perf_event_open, userfaultfd
    248, 249, 250,                # add_key, request_key, keyctl
    135, 303, 304,                # personality, name_to_handle_at, open_by_handle_at
    425, 426, 427,                # io_uring_*
)
_AUDIT_ARCH_X86_64 = 0xC000003E
_MACHINE = os.uname().machine  # resolved before any chroot


def install_seccomp():
    """Install a seccomp-bpf deny list (needs no_new_privs). Returns False
    on architectures the filter does not cover."""
    if _MACHINE != "x86_64":
        return False
    BPF_LD_W_ABS, BPF_JEQ_K, BPF_RET_K = 0x20, 0x15, 0x06
    RET_ALLOW, RET_KILL, RET_EPERM = 0x7FFF0000, 0x80000000, 0x00050000 | 1
    ins = [(BPF_LD_W_ABS, 0, 0, 4),                          # arch
           (BPF_JEQ_K, 1, 0, _AUDIT_ARCH_X86_64),
           (BPF_RET_K, 0, 0, RET_KILL),
           (BPF_LD_W_ABS, 0, 0, 0)]                           # syscall nr
    n = len(_DENY_X86_64)
    for i, nr in enumerate(_DENY_X86_64):
        ins.append((BPF_JEQ_K, n - i, 0, nr))                # -> deny
    ins.append((BPF_RET_K, 0, 0, RET_ALLOW))
    ins.append((BPF_RET_K, 0, 0, RET_EPERM))
    prog = b"".join(_st.pack("=HBBI", *x) for x in ins)
    buf = ctypes.create_string_buffer(prog, len(prog))

    class SockFprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    fp = SockFprog(len(ins), ctypes.addressof(buf))
    PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 22, 2
    if _LIBC.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(fp), 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_SECCOMP) failed")
    return True


def harden(req, keep_fd):
    d = req["dir"]
    null = os.open("/dev/null", os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.close(null)
    os.closerange(3, keep_fd)
    os.closerange(keep_fd + 1, 65536)
    _LIBC.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    uid = 200000 + os.getpid()
    if req.get("sandbox"):
        os.chown(d + "/tmp", uid, uid)
        os.chdir(d)
        os.chroot(d)
        os.chdir("/")
        import _pvm_rt
        _pvm_rt.TMP_BASE[0] = ""
    else:
        os.chdir(d)
        import _pvm_rt
        _pvm_rt.TMP_BASE[0] = d
    rl = req.get("rl", {})
    for name, key in (("as", resource.RLIMIT_AS), ("cpu", resource.RLIMIT_CPU),
                      ("fsize", resource.RLIMIT_FSIZE), ("nofile", resource.RLIMIT_NOFILE),
                      ("core", resource.RLIMIT_CORE)):
        if name in rl:
            v = int(rl[name])
            resource.setrlimit(key, (v, v))
    if req.get("sandbox"):
        if _LIBC.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            raise OSError("prctl(PR_SET_NO_NEW_PRIVS) failed")
        os.setgroups([])
        os.setgid(uid)
        os.setuid(uid)
        resource.setrlimit(resource.RLIMIT_NPROC, (0, 0))
        install_seccomp()


SPARE = 2

_WARM_ACTOR = b"""
import json, re, math
from cowboy_sdk import actor, public, runtime

@actor
class Warm:
    def __init__(self):
        self.storage["n"] = 0

    @public
    def go(self, by=1):
        d = {"a": [1, 2, 3], "b": {str(i): i * 1.5 for i in range(4)}}
        s = {x % 3 for x in range(5)}
        self.storage["n"] = self.storage.get("n", 0) + by
        runtime.emit_event("warm", {"by": by, "s": list(s)})
        return [json.dumps(d), bool(re.match(r"[a-z]+", "abc")), math.sqrt(2.0), f"{by:>4}", sorted(s)]
"""


class _WarmChan:
    def send(self, m):
        self.last = m

    def recv(self):
        if self.last.get("op") == "storage_get":
            return {"t": "ok", "cy": 10, "v": _pvm_cbor.dumps(1)}
        if self.last.get("op") == "block_info":
            return {"t": "ok", "cy": 100, "v": {"height": 1}}
        return {"t": "ok", "cy": 100}


def warm():
    """Run a representative call inside a spare child before it is handed a
    real call: the copy-on-write page faults of the first compile/execute are
    paid while idle. Every meter and context is reset afterwards (each real
    call also reconfigures everything)."""
    import _pvm_rt
    import pvm_host
    try:
        _pvm_worker.execute(_WarmChan(), {
            "code": _WARM_ACTOR, "handler": "go", "payload": b"", "cycles_limit": 10 ** 7, "limits": {},
            "costs": {"stmt": 1, "arith": 1, "compare": 1, "call": 10, "subscript": 3, "attribute": 1,
                      "list_append": 2, "loop_iter": 1},
            "actor": b"\0" * 20, "caller": b"\0" * 20, "origin": b"\0" * 20})
    except BaseException:
        pass
    _pvm_rt.configure(0, {}, {})
    _pvm_rt.HOST[0] = None
    pvm_host.CTX.clear()


def child(ctl, notify):
    """A pre-forked child: warm up, wait for one call, then serve it."""
    _LIBC.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    code = 0
    try:
        # A call already waiting is served at once; otherwise warm up first.
        try:
            msg, fds, _flags, _addr = socket.recv_fds(ctl, 65536, 1, socket.MSG_DONTWAIT)
        except BlockingIOError:
            msg, fds = None, []
            warm()
        while msg is None or (msg and not fds):
            msg, fds, _flags, _addr = socket.recv_fds(ctl, 65536, 1)
        if not msg:  # Go closed the control socket
            os.write(notify, b"q")
            os._exit(0)
        os.write(notify, b".")
        os.close(notify)
        ctl.close()
        req = _pvm_cbor.loads(msg)
        harden(req, fds[0])
        sock = socket.socket(fileno=fds[0])
        _pvm_worker.serve(_pvm_worker.Chan(sock))
    except BaseException:
        code = 3
    os._exit(code)


def main():
    _pvm_env.prebuild()
    # Exercise the whole pipeline once so every lazily imported module and
    # cache is populated before forking.
    import _pvm_rt
    _pvm_rt.configure(10 ** 9, {}, {})
    try:
        _pvm_env.Loader({}, {"stmt": 1, "arith": 1, "compare": 1, "call": 10, "subscript": 3, "attribute": 1,
                             "list_append": 2, "loop_iter": 1}, {}).compile(
            b"import re\nclass A:\n    def f(self, x):\n        return [i * 2 for i in x if i % 3]\n", "<warm>")
        _pvm_env.Pattern(r"\w+")
    except BaseException:
        pass
    _pvm_rt.configure(0, {}, {})
    ctl = socket.socket(fileno=3)
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)
    gc.collect()
    gc.freeze()
    gc.disable()
    r, w = os.pipe()

    def spawn():
        if os.fork() == 0:
            os.close(r)
            child(ctl, w)

    for _ in range(SPARE):
        spawn()
    while True:
        try:
            b = os.read(r, 1)
        except InterruptedError:
            continue
        if b != b".":
            os._exit(0)
        spawn()


if __name__ == "__main__":
    main()

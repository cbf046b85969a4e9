// Package pvm runs Cowboy actor handlers on CPython 3.11, deterministically,
// metered and sandboxed.
//
// # API
//
//	e, err := pvm.New(ctx, pvm.Config{})            // empty Config works
//	defer e.Close()
//	libs, err := e.Validate(ctx, source)           // candidate library imports, or *ValidationError
//	out, err := e.Execute(ctx, &pvm.Invocation{...}, host)
//
// Execute returns an error only for infrastructure failures (worker crash,
// wall-clock safety kill, engine closed). Everything the actor can cause is
// reported in Outcome.Err as an *ExecError with a deterministic Kind and
// Message; CyclesUsed and CellsUsed are filled in either way.
//
// # Processes
//
// New starts Config.PoolSize zygote processes in fresh network, mount, IPC
// and UTS namespaces, with an empty environment except PYTHONHASHSEED=0 and
// the flags -S -s -B -P -u (not -I: it implies -E, which would ignore
// PYTHONHASHSEED). The embedded Python sources (pvm/python) are written to a
// private directory first. A zygote imports the whole Python side once,
// builds the module proxies, warms the compile pipeline, disables and
// freezes the GC, and keeps two spare children forked ahead of time. Each
// spare child runs a representative warm-up call in-process (so the
// copy-on-write faults of the first compile are paid while idle), then waits
// on the zygote's SOCK_SEQPACKET control socket (fd 3).
//
// For every call Go creates a socketpair and a scratch directory and sends
// one end of the pair over the control socket with SCM_RIGHTS. The spare
// child that receives it tells the zygote to fork a replacement, closes
// every other fd, chroots into the scratch directory, switches to a unique
// unprivileged uid (200000+pid), sets PR_SET_NO_NEW_PRIVS, rlimits
// (address space, CPU seconds, file size, open files, nproc=0) and a
// seccomp-bpf deny list (exec, sockets, fork/clone, ptrace, mount, chroot,
// namespaces, modules, bpf, keyrings, io_uring: EPERM), serves
// exactly that call and exits, so no Python state survives a call. Go kills
// a child that outlives Limits.WallClock and reports ErrWallClock.
//
// # Protocol
//
// Frames on the call socket are a 4-byte big-endian length followed by a
// CBOR map whose "t" key names the message:
//
//	child -> Go  {"t":"hello","pid":N}
//	Go -> child  call: {"op":"execute"|"validate","code":...,"libs":{...},"handler":...,
//	             "payload":cbor,"cycles_limit":N,"limits":{...},"costs":{...},...}
//	child -> Go  {"t":"host","op":"storage_get","key":...}   (any number, synchronous)
//	Go -> child  {"t":"ok","cy":cycles,"v":value} | {"t":"err","cy":cycles,"kind":K,"msg":M}
//	child -> Go  {"t":"done","ok":bool,"ret":cbor,"cycles":N,"tmp":N,"kind":K,"msg":M,...}
//
// Go charges the host-call costs (spec §17.3) and cells (§17.4) itself and
// tells the child how many cycles to add ("cy"), so the cost table lives in
// one place: CostTable, which is also sent to the worker for the Python
// operation costs. Ops beyond the Host interface (timers, jobs, signature
// checks) are sent by pvm_host.host_call(op, **args) and served by a Host
// that also implements ExtendedHost. A "crash" frame reports a bug in the
// Python runtime itself (ErrWorkerCrashed).
//
// # Actors
//
// Two styles are supported. A plain `class Actor:` keeps its instance
// attributes in the reserved storage key __STATE__ (one deterministic CBOR
// map, written back only if its encoding changed). Tuples, sets and
// frozensets survive the round trip: a tuple is written as tag 0x43420001
// (Cowboy private), a set as tag 258 (IANA "finite set") and a frozenset as
// tag 0x43420002, each around the array of its elements (sets in insertion
// order); map keys are sorted by their encoded bytes as before. States
// written before these tags still load: their sets and tuples come back as
// lists and array map keys as tuples, and such a state is not rewritten
// just because it would now encode differently. Return values, payloads
// and @actor storage values stay untagged. A class
// decorated with cowboy_sdk's @actor uses self.storage (dict-like, CBOR
// values, backed by Host storage); if any method is marked @public only
// those are callable. Handlers never start with "_". Init runs __init__ with
// the payload arguments. Storage keys __OWNER__, __INITIALIZED__ and
// __STATE__ cannot be written by actor code. Invocation.Libraries are
// importable by name, validated like actors, and loaded lazily.
//
// # Metering
//
// Actor and library source is validated (see Validate) and rewritten by an
// AST transformer: every statement list charges its static cost, loop bodies
// and function entries check the budget, and size-dependent operations
// (+ - * ** << %, comparisons of two non-constant operands, slicing, `in`,
// unpacking, str/list/dict bulk methods,
// sum/sorted/min/max/list/..., re, json, hashlib, struct) charge by operand
// size before they run. Integers are capped at Limits.MaxIntBits. Costs of
// the cost table are charged per source construct (an instrumentation call
// costs what the construct it replaced costs), so the cycle count of a call
// depends only on the source, the inputs and the table.
//
// The names str, int, list, tuple, dict, bytes, bytearray and type are
// bound to stand-ins (_pvm_rt.BType): calling one is the metered
// constructor, type() of a builtin value returns the stand-in (so
// `type(x) is str`, `type(x) == str` and `type(x) in (str, bytes)` hold,
// and type(str) is type), isinstance/issubclass, class bases and match
// patterns see the real type, and attribute access yields the type's
// methods unbound and metered like the bound calls (str.upper(s),
// str.join(sep, xs), list.append(l, x), dict.fromkeys(ks)). Private,
// dunder and forbidden names (mro) are refused, so the real type and its
// unmetered constructor stay unreachable.
//
// Memory is a deterministic meter, not a heap measurement: it counts list
// and dict growth (8 bytes per list element, 24 per dict or set entry), the
// growth of str/bytes/list results of +, *, %, join, replace, padding and
// similar operations, bytes/bytearray allocations and large f-strings.
// Exceeding Limits.MemoryBytes fails with MemoryLimit on every node. Freed
// memory is not credited. The address-space rlimit is only a safety net.
//
// # Determinism
//
// PYTHONHASHSEED=0, gc disabled, sets are insertion ordered, math
// transcendentals are computed in software (decimal) and rounded once, the
// decimal context is fixed, json.dumps sorts keys, object reprs carry no
// addresses, and no clock, randomness, environment or network is reachable.
// A wall-clock kill is not deterministic and is therefore reported as an
// infrastructure error (ErrWallClock), never as an Outcome.
package pvm

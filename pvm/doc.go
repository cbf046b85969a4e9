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
// New starts Config.PoolSize zygote processes (python3 -S -s -B -P
// zygote.py, empty environment except PYTHONHASHSEED=0) in fresh network,
// mount, IPC and UTS namespaces. A zygote imports the whole Python side once
// and then waits on a SOCK_SEQPACKET control socket (fd 3). For every call Go
// creates a socketpair and a scratch directory, passes one end of the pair to
// a zygote with SCM_RIGHTS, and the zygote fork()s a child that serves
// exactly that call and exits, so no Python state survives a call. The child
// closes every other fd, chroots into the scratch directory, drops to a
// unique unprivileged uid, sets PR_SET_NO_NEW_PRIVS and rlimits (address
// space, CPU seconds, file size, open files, nproc=0), then serves.
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
// operation costs.
//
// # Metering
//
// Actor and library source is validated (see Validate) and rewritten by an
// AST transformer: every statement list charges its static cost, loop bodies
// and function entries check the budget, and size-dependent operations
// (+ - * ** << %, slicing, `in`, unpacking, str/list/dict bulk methods,
// sum/sorted/min/max/list/..., re, json, hashlib, struct) charge by operand
// size before they run. Integers are capped at Limits.MaxIntBits. Memory is
// a deterministic meter of data-dependent growth (Limits.MemoryBytes); the
// address-space rlimit is only a safety net.
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

package pvm

import (
	"errors"
	"fmt"
)

// Infrastructure errors returned by Engine methods. They are never caused
// deterministically by actor code; callers use errors.Is.
var (
	ErrClosed        = errors.New("pvm: engine closed")
	ErrWorkerCrashed = errors.New("pvm: worker crashed")
	ErrWallClock     = errors.New("pvm: wall-clock safety limit exceeded")
	ErrProtocol      = errors.New("pvm: worker protocol error")
	// ErrHostFailure may be wrapped by a Host method to signal that the host
	// itself failed (not the actor): Execute then returns an error instead of
	// an Outcome.
	ErrHostFailure = errors.New("pvm: host failure")
)

// ErrorKind classifies a deterministic actor failure.
type ErrorKind string

// Error kinds reported in ExecError.Kind.
const (
	OutOfCycles       ErrorKind = "OutOfCycles"
	OutOfCells        ErrorKind = "OutOfCells"
	MemoryLimit       ErrorKind = "MemoryLimit"
	RecursionLimit    ErrorKind = "RecursionLimit"
	TmpLimit          ErrorKind = "TmpLimit"
	ActorException    ErrorKind = "ActorException"
	ReadOnlyViolation ErrorKind = "ReadOnlyViolation"
	HostError         ErrorKind = "HostError"
	ValidationFailed  ErrorKind = "ValidationError"
	HandlerNotFound   ErrorKind = "HandlerNotFound"
	ReturnTooLarge    ErrorKind = "ReturnTooLarge"
	InvalidPayload    ErrorKind = "InvalidPayload"
	// DeterminismError: the call left a reference cycle behind (spec 002
	// §3); with the cyclic collector disabled it would leak.
	DeterminismError ErrorKind = "DeterminismError"
)

// ExecError is a deterministic failure of actor execution. The same
// invocation on the same state fails with the same Kind and Message on
// every node.
type ExecError struct {
	Kind    ErrorKind
	Message string
}

func (e *ExecError) Error() string { return string(e.Kind) + ": " + e.Message }

// ValidationError reports the first rule violation in source order.
type ValidationError struct {
	Line, Col int
	Rule      string
	Message   string
}

func (e *ValidationError) Error() string {
	return fmt.Sprintf("pvm: validation: line %d col %d [%s] %s", e.Line, e.Col, e.Rule, e.Message)
}

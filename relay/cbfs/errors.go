package cbfs

import (
	"errors"

	"github.com/cowboy-foundation/cowboy/relay/captoken"
)

// Stable errors of the package.
var (
	// ErrNotFound: no such file, volume or manifest.
	ErrNotFound = errors.New("cbfs: not found")
	// ErrTokenExpired: the capability token (or a link of it) has expired.
	ErrTokenExpired = captoken.ErrExpired
	// ErrPermission: the token does not allow the operation or path.
	ErrPermission = errors.New("cbfs: permission denied")
	// ErrInsufficientShards: fewer than K intact shards could be read.
	ErrInsufficientShards = errors.New("cbfs: not enough intact shards")
	// ErrInsufficientRelays: not enough distinct healthy relays to place shards.
	ErrInsufficientRelays = errors.New("cbfs: not enough healthy relays")
	// ErrConflict: the manifest changed concurrently too many times.
	ErrConflict = errors.New("cbfs: manifest version conflict")
	// ErrUploadDone: Commit or Abort was already called.
	ErrUploadDone = errors.New("cbfs: upload already committed or aborted")
	// ErrIntegrity: data or manifest failed verification.
	ErrIntegrity = errors.New("cbfs: integrity check failed")
	// ErrRelayFull: a relay refused a shard for lack of space.
	ErrRelayFull = errors.New("cbfs: relay full")
)

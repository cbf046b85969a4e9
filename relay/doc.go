// Package relay implements a CBFS storage relay: a QUIC server (ALPN
// "cbfs/1", TLS 1.3 with a certificate bound to the node's secp256k1 key)
// that stores opaque, client-encrypted shards and encrypted manifests for
// volumes, verifying capability tokens offline on every request.
//
// Storage (package relay/internal/store): one file per object, written to a
// temp file while hashing, fsynced, atomically renamed and indexed in bbolt;
// an object is acknowledged only after the index commit, so acknowledged
// data survives kill -9. Hashes are checked on write and re-checked on every
// read and challenge.
//
// Lifecycle: New opens the store; Run serves until its context ends or
// Shutdown is called; Shutdown stops accepting, waits for in-flight requests
// (or its deadline) and then closes; Close stops at once. Shutdown and Close
// are safe to call more than once.
//
// The wire protocol is documented in package relay/wire; the client library
// is package relay/cbfs.
package relay

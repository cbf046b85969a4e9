// Package fuse mounts CBFS volumes as POSIX filesystems with FUSE
// (github.com/hanwen/go-fuse/v2, fs API).
//
// # Namespace and metadata
//
// Everything POSIX lives in the volume manifest: each file, directory and
// symlink is a cbfs.FileEntry whose optional Mode, UID, GID and Target
// fields hold st_mode (with type bits), ownership and the symlink target;
// ModTime is the mtime. Directories are entries with S_IFDIR; directories
// only implied by deeper paths (files written with `cowboy volume put`) are
// shown with mode 0755. atime is not kept (it reads as mtime); ctime is
// local to a mount. Hard links are refused with EPERM: a manifest entry is
// one path and its content cannot be shared by two names that stay in
// sync. Renames are metadata only (segment encryption does not depend on
// the path), so renaming a large file moves no data.
//
// # Data path
//
// Reads fetch only the segments that cover the requested range
// (cbfs.Volume.ReadSegment) and keep them in a local read cache; writes go
// to a local write-back buffer. Both are blocks of 64 KiB sealed with
// AES-256-GCM under a key derived from Options.CacheKey (the CLI derives it
// from the account key), bound to their inode and block number, in a
// private directory removed at unmount. The read cache is bounded by
// Options.CacheSize (least recently used files are evicted); unflushed
// writes are never evicted.
//
// # Consistency
//
// A commit is durable once a majority of the volume's relays hold its
// signed head (relay/cbfs, docs/RELAY.md "Metadata commits"): one relay
// round trip, no chain transaction. close(2) of a file opened for writing
// and fsync(2) upload the file's dirty data and commit before returning;
// namespace changes (create of an empty file, mkdir, rename, unlink, chmod,
// chown, utimens, symlink) are batched and committed within
// Options.CommitDelay, or at once by fsync/close. Commits are path
// operations applied to the relays' latest head: when another mount
// committed first (the relays refuse a version that does not follow their
// head), the mount reloads the head, re-applies its changes and retries,
// so two mounts of one volume merge their changes; on the same path the
// last commit wins. The on-chain StorageCommitment is a checkpoint written
// a few seconds later (`cowboy volume sync` forces it); reads never wait
// for it.
//
// Across mounts the model is close-to-open with a staleness bound: every
// open drops the kernel's page cache of the file, and a change closed on
// one mount is visible on another after at most PollInterval (head poll)
// + AttrTimeout (kernel attribute/name cache), 2s with the defaults.
// Content is never mixed: a reader sees one committed version of a file
// whole.
//
// What a crash loses: nothing that close(2) or fsync(2) returned success
// for (it is on a relay majority). Data written but not yet closed or
// fsynced, and namespace changes younger than CommitDelay, are lost if the
// serving process is killed (SIGKILL); a failed final flush keeps them in
// the journal instead (below). A writer killed after its majority write but
// before the checkpoint loses nothing: the next checkpoint anchors a later
// head that descends from it.
//
// Options.DeferCloseCommit trades close-to-open consistency for speed:
// close(2) then only uploads the data, and the commit joins the next batch.
//
// A writer that replaces a file deletes the old version's shards once its
// commit lands; another mount still reading the old version through an open
// handle (or a view older than the staleness bound) then gets EIO from
// reads of segments it had not cached yet.
//
// Mounting through a capability token works until the token expires: the
// mount does not renew it, and reads and writes then fail with EACCES (the
// log says the token expired). The owner's own tokens are renewed
// automatically. A token without write permission (or restricted to a path
// prefix, which cannot replace the manifest) mounts read-only, and every
// write fails with EROFS.
//
// # Crashes and unmount
//
// Unmount (and SIGINT/SIGTERM in `cowboy volume mount`) uploads every dirty
// file and commits before the mount goes away. `cowboy volume unmount`
// (Unmount) asks the serving process, over its control socket
// (ControlPath), to do so and reports the outcome: if the changes cannot
// be committed it fails with ErrNotFlushed and the volume stays mounted.
// Whenever a final flush fails (the serving process asked to stop, or an
// external fusermount3 -u), the pending changes — namespace changes and the
// encrypted blocks of dirty files — are written to Options.JournalDir, the
// process exits non-zero, and the next mount of the volume with the same
// cache key commits them before serving. If the serving process is killed, data written
// but not yet closed or fsynced is lost, as are namespace changes younger
// than CommitDelay: the next mount shows the volume as of the last commit
// (every closed or fsynced file complete, never a partial file). The dead
// process's encrypted buffer is left in its cache directory, unreadable
// without the key. Shards uploaded but never committed are garbage on the
// relays until repaired.
package fuse

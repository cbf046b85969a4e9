package fuse

// WithDirtyCheck makes every commit of the mount check that its dirty
// marks (what it commits) agree with a walk of the whole namespace (what
// the mount shows), failing the commit if they do not.
func WithDirtyCheck(o Options) Options {
	o.verifyDirty = true
	return o
}

// CommitCounts returns how many commits the mount made and how many
// entries they changed in all.
func (mt *Mounted) CommitCounts() (commits, changes int64) {
	return mt.m.commits.Load(), mt.m.commitChanges.Load()
}

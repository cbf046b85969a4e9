package fuse

// WithDirtyCheck makes every commit of the mount check that its dirty
// marks (what it commits) agree with a walk of the whole namespace (what
// the mount shows), failing the commit if they do not.
func WithDirtyCheck(o Options) Options {
	o.verifyDirty = true
	return o
}

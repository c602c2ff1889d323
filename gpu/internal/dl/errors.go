package dl

import "github.com/ggsim/ggsim/internal/errs"

// ErrNotBuilt is returned by every function of a build without the cuda tag. It matches
// errors.ErrUnsupported: such a build does not support running on a GPU.
var ErrNotBuilt = errs.Unsupported("ggsim built without the cuda tag")

// ErrNoCgo is returned by every function of a build with the cuda tag but without cgo.
// It matches errors.ErrUnsupported.
var ErrNoCgo = errs.Unsupported("ggsim built with the cuda tag but without cgo (CGO_ENABLED=0)")

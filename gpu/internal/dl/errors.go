package dl

import "errors"

// ErrNotBuilt is returned by every function of a build without the cuda tag.
var ErrNotBuilt = errors.New("ggsim built without the cuda tag")

// ErrNoCgo is returned by every function of a build with the cuda tag but without cgo.
var ErrNoCgo = errors.New("ggsim built with the cuda tag but without cgo (CGO_ENABLED=0)")

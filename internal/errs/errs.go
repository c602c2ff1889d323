// Package errs makes the sentinel errors with which ggsim's packages say "not modelled":
// each package has its own (quant.ErrUnsupported, sim.ErrUnsupported, ...), so that
// errors.Is can tell where a refusal came from, and every one of them matches
// errors.ErrUnsupported, so that a caller (the oracle's verdict) classifies any of them
// with one errors.Is(err, errors.ErrUnsupported), never by the text.
package errs

import "errors"

// Unsupported returns a new sentinel error with the text msg for which
// errors.Is(err, errors.ErrUnsupported) holds.
func Unsupported(msg string) error { return &unsupported{msg} }

type unsupported struct{ msg string }

func (e *unsupported) Error() string { return e.msg }

// Is reports whether target is errors.ErrUnsupported.
func (e *unsupported) Is(target error) bool { return target == errors.ErrUnsupported }

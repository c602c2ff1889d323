package sim

import "github.com/ggsim/ggsim/internal/errs"

// ErrUnsupported is wrapped by the errors of the simulated kernels (sim/q8, sim/mmvq,
// sim/mmq) that say a valid request is not modelled: a device whose arithmetic ggsim
// does not simulate (AMD, a warp size other than 32), a type without a kernel. It matches
// errors.ErrUnsupported. Inconsistent sizes and other bad input are other errors.
var ErrUnsupported = errs.Unsupported("sim: not modelled")

//go:build !cuda || !cgo

package cuda

import (
	"github.com/ggsim/ggsim/fp16path"
	"github.com/ggsim/ggsim/gpu/internal/dl"
	"github.com/ggsim/ggsim/quant"
)

// Built reports whether this build has the GPU backend (the cuda tag and cgo).
const Built = false

func notBuilt() error {
	_, err := dl.Open("libcuda.so.1") // the dl stub's error says which of tag or cgo is missing
	return err
}

// DevPtr is a device address (CUdeviceptr).
type DevPtr uint64

// Dim3 is a grid or block shape.
type Dim3 struct{ X, Y, Z uint32 }

// Context is a device context; this build cannot make one.
type Context struct{}

// Module is a compiled CUDA module; this build cannot make one.
type Module struct{}

// Function is a kernel; this build cannot make one.
type Function struct{}

// Open returns ErrNotBuilt: this build has no GPU backend.
func Open(o Options) (*Context, error) { return nil, notBuilt() }

// QueryDevice returns ErrNotBuilt.
func QueryDevice(o Options) (DeviceInfo, error) { return DeviceInfo{}, notBuilt() }

// NVRTCVersion returns ErrNotBuilt.
func NVRTCVersion(o Options) (major, minor int, path string, err error) { return 0, 0, "", notBuilt() }

// CompileProgram returns ErrNotBuilt.
func CompileProgram(o Options, name, src, arch string, opts ...string) (Program, error) {
	return Program{}, notBuilt()
}

// Info returns the zero DeviceInfo.
func (c *Context) Info() DeviceInfo { return DeviceInfo{} }

// Close returns nil.
func (c *Context) Close() error { return nil }

// Alloc returns ErrNotBuilt.
func (c *Context) Alloc(n int) (DevPtr, error) { return 0, notBuilt() }

// Free returns ErrNotBuilt.
func (c *Context) Free(p DevPtr) error { return notBuilt() }

// CopyToDevice returns ErrNotBuilt.
func (c *Context) CopyToDevice(dst DevPtr, src []byte) error { return notBuilt() }

// CopyFromDevice returns ErrNotBuilt.
func (c *Context) CopyFromDevice(dst []byte, src DevPtr) error { return notBuilt() }

// Memset returns ErrNotBuilt.
func (c *Context) Memset(p DevPtr, v byte, n int) error { return notBuilt() }

// Synchronize returns ErrNotBuilt.
func (c *Context) Synchronize() error { return notBuilt() }

// Compile returns ErrNotBuilt.
func (c *Context) Compile(name, src string, opts ...string) (*Module, error) { return nil, notBuilt() }

// LoadModule returns ErrNotBuilt.
func (c *Context) LoadModule(name string, image []byte) (*Module, error) { return nil, notBuilt() }

// PTX returns "".
func (m *Module) PTX() string { return "" }

// Cubin returns nil.
func (m *Module) Cubin() []byte { return nil }

// Log returns "".
func (m *Module) Log() string { return "" }

// Unload returns ErrNotBuilt.
func (m *Module) Unload() error { return notBuilt() }

// Function returns ErrNotBuilt.
func (m *Module) Function(name string) (*Function, error) { return nil, notBuilt() }

// Launch returns ErrNotBuilt.
func (f *Function) Launch(grid, block Dim3, sharedMem uint32, args ...any) error { return notBuilt() }

// ProbeModule returns ErrNotBuilt.
func (c *Context) ProbeModule(file string, extra ...string) (*Module, error) { return nil, notBuilt() }

// ProbeRcpBinade returns ErrNotBuilt.
func (c *Context) ProbeRcpBinade(base uint32) ([]uint32, error) { return nil, notBuilt() }

// ProbeRcpList returns ErrNotBuilt.
func (c *Context) ProbeRcpList(x []uint32) ([]uint32, error) { return nil, notBuilt() }

// ProbeDiv returns ErrNotBuilt.
func (c *Context) ProbeDiv(a, b []float32) (q, m []float32, err error) { return nil, nil, notBuilt() }

// ProbeDiv127 returns ErrNotBuilt.
func (c *Context) ProbeDiv127(x []float32) (over, into []float32, err error) {
	return nil, nil, notBuilt()
}

// ProbeHalf2 returns ErrNotBuilt.
func (c *Context) ProbeHalf2(a, b, cc []uint32) (add, mul, fma []uint32, err error) {
	return nil, nil, nil, notBuilt()
}

// ProbeHalf2Intrinsics returns ErrNotBuilt.
func (c *Context) ProbeHalf2Intrinsics(a, b, cc []uint32) (add, mul, fma []uint32, err error) {
	return nil, nil, nil, notBuilt()
}

// ProbeDp4a returns ErrNotBuilt.
func (c *Context) ProbeDp4a(a, b, cc []int32) ([]int32, error) { return nil, notBuilt() }

// ProbeMMA returns ErrNotBuilt.
func (c *Context) ProbeMMA(ws []MmaWarp) ([]MmaOut, error) { return nil, notBuilt() }

// ProbeRound returns ErrNotBuilt.
func (c *Context) ProbeRound(x []float32) (r []float32, q8, q4 []int8, err error) {
	return nil, nil, nil, notBuilt()
}

// ProbeRoundAll returns ErrNotBuilt.
func (c *Context) ProbeRoundAll() (RoundAll, error) { return RoundAll{}, notBuilt() }

// ProbeRcpAll returns ErrNotBuilt.
func (c *Context) ProbeRcpAll() (Sweep, error) { return Sweep{}, notBuilt() }

// ProbeDiv127All returns ErrNotBuilt.
func (c *Context) ProbeDiv127All() (Sweep, error) { return Sweep{}, notBuilt() }

// ProbeDivAll returns ErrNotBuilt.
func (c *Context) ProbeDivAll(a float32) (Sweep, error) { return Sweep{}, notBuilt() }

// ProbeDiv127NumAll returns ErrNotBuilt.
func (c *Context) ProbeDiv127NumAll() (Sweep, error) { return Sweep{}, notBuilt() }

// ProbeF2HAll returns ErrNotBuilt.
func (c *Context) ProbeF2HAll() (Sweep, error) { return Sweep{}, notBuilt() }

// ProbeHalfOps returns ErrNotBuilt.
func (c *Context) ProbeHalfOps(bs, cs []uint16) ([]uint16, error) { return nil, notBuilt() }

// ProbeH2FAll returns ErrNotBuilt.
func (c *Context) ProbeH2FAll() ([]uint32, error) { return nil, notBuilt() }

// ProbeHalfSpecials returns ErrNotBuilt.
func (c *Context) ProbeHalfSpecials() ([]uint16, error) { return nil, notBuilt() }

// ProbeFloatSpecials returns ErrNotBuilt.
func (c *Context) ProbeFloatSpecials() ([]uint32, error) { return nil, notBuilt() }

// ProbeBytePerm returns ErrNotBuilt.
func (c *Context) ProbeBytePerm(x, y, s []uint32) ([]uint32, error) { return nil, notBuilt() }

// ProbeTiny returns ErrNotBuilt.
func (c *Context) ProbeTiny() (mul, fma [][4]uint32, err error) { return nil, nil, notBuilt() }

// FP16Path runs the fp16 path's CUDA kernels; this build cannot make one.
type FP16Path struct{}

// FP16Path returns ErrNotBuilt.
func (c *Context) FP16Path() (*FP16Path, error) { return nil, notBuilt() }

// MulMat returns ErrNotBuilt.
func (p *FP16Path) MulMat(t quant.Type, x []byte, K, N int, y []float32, M int, opt *fp16path.Options) ([]float32, error) {
	return nil, notBuilt()
}

// Activations returns ErrNotBuilt.
func (p *FP16Path) Activations(y []float32, K, M int) (*FP16Activations, error) {
	return nil, notBuilt()
}

// Close does nothing.
func (p *FP16Path) Close() error { return nil }

// MulMatSwiGLU returns ErrNotBuilt.
func (p *FP16Path) MulMatSwiGLU(t quant.Type, gate, up []byte, K, N int, y []float32, M int, opt *fp16path.Options) ([]float32, []FP16GLUTrace, error) {
	return nil, nil, notBuilt()
}

// RMSNormConvert returns ErrNotBuilt.
func (p *FP16Path) RMSNormConvert(x, w []float32, eps float32) (*FP16Norm, error) {
	return nil, notBuilt()
}

// RMSNormMulMat returns ErrNotBuilt.
func (p *FP16Path) RMSNormMulMat(x, w []float32, eps float32, t quant.Type, mats [][]byte, N int, opt *fp16path.Options) (*FP16Norm, [][]float32, error) {
	return nil, nil, notBuilt()
}

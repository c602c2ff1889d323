package cuda

// The results of the fp16 path's kernels (FP16Path, fp16path.go; built with the cuda tag).

// FP16Activations is what the conversion kernel wrote for M columns, laid out as
// fp16path.Activations for column c at [c*K/32 ...] (Exp), [c*K ...] (H), [c*K/16 ...]
// (Sum16).
type FP16Activations struct {
	K, M  int
	H     []uint16
	Exp   []int32
	Sum16 []float32
}

// FP16GLUTrace is what the fused SWIGLU kernel computed for one output besides it: the
// gate and up dot products and expf(-gate) as the device evaluated it (MUFU.EX2, not yet
// modelled by the simulator).
type FP16GLUTrace struct {
	Gate, Up, Expf float32
}

// FP16Norm is the output of the fused RMS_NORM * weight kernel: the normalised row, its
// conversion (the activation cache entry), and the argument and result of rsqrtf as the
// device evaluated them (MUFU.RSQ, not yet modelled by the simulator).
type FP16Norm struct {
	Dst       []float32
	Act       *FP16Activations
	RsqrtArg  float32
	Scale     float32
	BlockSize int // the block size the kernel ran with (fp16path.NormBlockSize)
}

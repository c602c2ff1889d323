package mmvq

// The VDR_<type>_Q8_1_MMVQ constants of vecdotq.cuh that the vec_dot loops of this
// package are written for (ints of x one vec_dot call reads). The launch plan takes
// its VDR from tiling.MMVQConstsOf; TestVDRConstants checks that the two agree.
const (
	vdrQ4_0   = 2
	vdrQ4_1   = 2
	vdrQ5_0   = 2
	vdrQ5_1   = 2
	vdrQ8_0   = 2
	vdrMXFP4  = 2
	vdrIQ4_NL = 2
	vdrIQ4_XS = 4
)

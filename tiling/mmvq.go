package tiling

import (
	"fmt"

	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
)

// MMVQTable is ggml's mmvq_parameter_table_id: which parameter table calc_nwarps and
// calc_rows_per_block use on a device.
type MMVQTable int

// The parameter tables of src/ggml-cuda/mmvq.cu (d99724f2b141).
const (
	TableGeneric MMVQTable = iota // MMVQ_PARAMETERS_GENERIC
	TableTuring                   // MMVQ_PARAMETERS_TURING
	TableGCN                      // MMVQ_PARAMETERS_GCN (GCN and CDNA)
	TableRDNA2                    // MMVQ_PARAMETERS_RDNA2 (RDNA2 and RDNA3.5)
	TableRDNA3_0                  // MMVQ_PARAMETERS_RDNA3_0
	TableRDNA4                    // MMVQ_PARAMETERS_RDNA4
	TableGB10                     // MMVQ_PARAMETERS_GB10 (DGX Spark)
)

var tableNames = [...]string{"GENERIC", "TURING", "GCN", "RDNA2", "RDNA3_0", "RDNA4", "GB10"}

func (t MMVQTable) String() string {
	if t >= 0 && int(t) < len(tableNames) {
		return tableNames[t]
	}
	return fmt.Sprintf("MMVQTable(%d)", int(t))
}

// MMVQTableOf is the host get_device_table_id(cc): RDNA4, RDNA3.0, RDNA2/RDNA3.5, GCN/CDNA by
// cc; on NVIDIA TURING when the highest compiled arch is in [750, 800), GB10 when it is
// 1210; GENERIC otherwise (every other NVIDIA device, RDNA1, Moore Threads).
func MMVQTableOf(dev *sim.Device) MMVQTable {
	cc := dev.CC
	switch {
	case sim.CCIsRDNA4(cc):
		return TableRDNA4
	case sim.CCIsRDNA3_0(cc):
		return TableRDNA3_0
	case sim.CCIsRDNA2(cc) || sim.CCIsRDNA3_5(cc):
		return TableRDNA2
	case sim.CCIsGCN(cc) || sim.CCIsCDNA(cc):
		return TableGCN
	}
	if sim.CCIsNVIDIA(cc) {
		hc := dev.HighestCompiledArch()
		if hc >= sim.CCTuring && hc < sim.CCAmpere {
			return TableTuring
		}
		if hc == sim.CCDGXSpark {
			return TableGB10
		}
	}
	return TableGeneric
}

// CalcNWarps is calc_nwarps(type, ncols_dst, table_id, small_k, halve_iters). Like ggml
// it returns 1 for column counts a table does not list (ncols_dst > 8).
func CalcNWarps(t quant.Type, ncols int, table MMVQTable, smallK, halveIters bool) int {
	switch table {
	case TableGeneric:
		switch {
		case ncols >= 1 && ncols <= 4:
			return 4
		case ncols >= 5 && ncols <= 8:
			return 2
		}
		return 1
	case TableGCN:
		if ncols >= 1 && ncols <= 4 {
			return 2
		}
		return 1
	case TableRDNA4:
		if ncols == 1 {
			switch t {
			case quant.Q4_0, quant.Q4_1, quant.Q5_0, quant.Q5_1, quant.Q8_0, quant.Q2_K,
				quant.Q4_K, quant.Q5_K, quant.Q6_K, quant.IQ4_NL, quant.IQ4_XS:
				return 8
			}
		}
		return 1
	case TableRDNA3_0:
		if ncols == 1 {
			switch t {
			case quant.Q4_0, quant.Q4_1, quant.Q5_0, quant.Q5_1, quant.Q8_0, quant.IQ4_NL:
				return 8
			case quant.Q6_K:
				return 2
			}
		}
		return 1
	case TableTuring:
		if ncols == 1 {
			switch t {
			case quant.Q2_K, quant.Q3_K, quant.Q4_K, quant.Q5_K, quant.Q6_K:
				return 2
			}
			return 4
		}
		switch {
		case ncols >= 2 && ncols <= 4:
			return 4
		case ncols >= 5 && ncols <= 8:
			return 2
		}
		return 1
	case TableGB10:
		generic := CalcNWarps(t, ncols, TableGeneric, false, false)
		if ncols == 1 && !smallK && halveIters {
			switch t {
			case quant.Q4_0, quant.Q4_1, quant.Q5_0, quant.Q5_1, quant.Q8_0, quant.Q4_K,
				quant.Q5_K, quant.Q6_K, quant.IQ4_NL:
				return 2 * generic
			}
		}
		return generic
	}
	return 1
}

// CalcRowsPerBlock is calc_rows_per_block(ncols_dst, table_id, small_k, nwarps).
func CalcRowsPerBlock(ncols int, table MMVQTable, smallK bool, nwarps int) int {
	switch table {
	case TableGeneric, TableGCN, TableTuring, TableGB10:
		switch {
		case ncols == 1:
			if smallK {
				return nwarps
			}
			return 1
		case ncols >= 2 && ncols <= 8:
			return 2
		}
	}
	return 1
}

// MoERowsPerBlock is the rows per CUDA block of mul_mat_vec_q_moe (fixed at 2).
const MoERowsPerBlock = 2

// MMVQPlan is the launch configuration ggml chooses for one MMVQ call: which kernel, the
// parameter table, the template flags and the block shape, and the per-thread K
// partition it implies.
type MMVQPlan struct {
	Type   quant.Type
	Kernel Kernel
	Table  MMVQTable
	// NCols is ncols_dst: columns (MUL_MAT) or tokens (MUL_MAT_ID) per launch.
	NCols int
	// SmallK and HalveIters are the template flags chosen by should_use_small_k and
	// should_halve_iters (ncols_dst == 1 only).
	SmallK, HalveIters bool
	// NWarps is the number of warps per block (threadIdx.y); for the MoE kernel the warps
	// are the tokens and each row is reduced by one warp (Warps is then 1: see
	// ThreadsPerRow).
	NWarps int
	// RowsPerBlock is the rows each CUDA block computes.
	RowsPerBlock int
	// WarpSize is the device's physical warp size.
	WarpSize int
	// QK, QI, VDR are the type's constants; BlocksPerIter = VDR*threads/QI is the stride
	// of the x-block loop (threads = NWarps*WarpSize, or WarpSize for the MoE kernel).
	QK, QI, VDR   int
	BlocksPerIter int
}

// ThreadsPerRow is the number of threads that share the K loop of one output: NWarps*32
// for mul_mat_vec_q, 32 for mul_mat_vec_q_moe.
func (p *MMVQPlan) ThreadsPerRow() int {
	if p.Kernel == KernelMMVQMoE {
		return p.WarpSize
	}
	return p.NWarps * p.WarpSize
}

// WarpsPerRow is the number of warps whose partial sums are added before the butterfly.
func (p *MMVQPlan) WarpsPerRow() int {
	if p.Kernel == KernelMMVQMoE {
		return 1
	}
	return p.NWarps
}

func (p *MMVQPlan) String() string {
	return fmt.Sprintf("%s<%v, ncols=%d, small_k=%v, halve_iters=%v> table=%v nwarps=%d rows_per_block=%d blocks_per_iter=%d",
		p.Kernel.GGMLName(), p.Type, p.NCols, p.SmallK, p.HalveIters, p.Table, p.NWarps, p.RowsPerBlock, p.BlocksPerIter)
}

// MakeMMVQPlan returns the launch ggml_cuda_mul_mat_vec_q makes for type t with k values per
// row on dev: ncols columns (ids == false: MUL_MAT) or ncols tokens (ids == true:
// MUL_MAT_ID; 2..8 tokens use mul_mat_vec_q_moe). It follows
// mul_mat_vec_q_switch_ncols_dst: should_use_small_k, should_halve_iters, calc_nwarps,
// calc_rows_per_block. It returns an error if t has no MMVQ kernel, ncols is outside
// 1..8, k is not a positive multiple of the block size, or the device's warp size is not
// 32 or 64.
func MakeMMVQPlan(dev *sim.Device, t quant.Type, k, ncols int, ids bool) (*MMVQPlan, error) {
	tk, ok := MMVQConstsOf(t)
	if !ok {
		return nil, fmt.Errorf("tiling: ggml has no mul_mat_vec_q kernel for type %v", t)
	}
	if ncols < 1 || ncols > MMVQMaxBatchSize {
		return nil, fmt.Errorf("tiling: %d columns: mul_mat_vec_q handles 1..%d", ncols, MMVQMaxBatchSize)
	}
	if k <= 0 || k%tk.QK != 0 {
		return nil, fmt.Errorf("tiling: row length %d is not a positive multiple of the %v block size %d", k, t, tk.QK)
	}
	ws := dev.WarpSize
	if ws != 32 && ws != 64 {
		return nil, fmt.Errorf("tiling: device %q has warp size %d; ggml uses 32 or 64", dev.Name, ws)
	}
	table := MMVQTableOf(dev)
	p := &MMVQPlan{Type: t, Table: table, NCols: ncols, WarpSize: ws, QK: tk.QK, QI: tk.QI, VDR: tk.VDR}
	blocksPerRow := k / tk.QK
	bpi1 := tk.VDR * ws / tk.QI
	p.Kernel = KernelMMVQ
	if ids && ncols > 1 {
		p.Kernel = KernelMMVQMoE
		p.NWarps = ncols // one warp per token
		p.RowsPerBlock = MoERowsPerBlock
		p.BlocksPerIter = bpi1
		return p, nil
	}
	cc := dev.CC
	if ncols == 1 {
		// should_use_small_k
		nw := CalcNWarps(t, 1, table, false, false)
		use := nw > 1 && blocksPerRow < nw*bpi1
		turingPlus := sim.CCIsNVIDIA(cc) && cc >= sim.CCTuring
		pascalOlder := sim.CCIsNVIDIA(cc) && cc < sim.CCVolta
		if turingPlus {
			if t == quant.IQ3_XXS || t == quant.IQ3_S {
				use = false
			}
		} else if isOneOf(t, quant.IQ1_S, quant.IQ1_M, quant.IQ2_XXS, quant.IQ2_XS, quant.IQ2_S, quant.IQ3_XXS, quant.IQ3_S, quant.IQ4_XS) ||
			(pascalOlder && isOneOf(t, quant.IQ3_S, quant.Q2_K, quant.Q3_K)) || sim.CCIsRDNA(cc) {
			use = false
		}
		p.SmallK = use
		if !use && table == TableGB10 && !ids {
			// should_halve_iters
			bpi := CalcNWarps(t, 1, table, false, false) * bpi1
			iters := (blocksPerRow + bpi - 1) / bpi
			itersWide := (blocksPerRow + 2*bpi - 1) / (2 * bpi)
			idle := itersWide*2 - iters
			if idle*8 <= itersWide*2 {
				// c_halve_iters also requires that the table promotes the type.
				p.HalveIters = CalcNWarps(t, 1, TableGB10, false, true) != CalcNWarps(t, 1, TableGB10, false, false)
			}
		}
	}
	p.NWarps = CalcNWarps(t, ncols, table, p.SmallK, p.HalveIters)
	p.RowsPerBlock = CalcRowsPerBlock(ncols, table, p.SmallK, p.NWarps)
	p.BlocksPerIter = tk.VDR * p.NWarps * ws / tk.QI
	return p, nil
}

func isOneOf(t quant.Type, ts ...quant.Type) bool {
	for _, u := range ts {
		if t == u {
			return true
		}
	}
	return false
}

// MMVQConsts are the per-type constants mul_mat_vec_q is instantiated with: qk and qi of
// ggml_cuda_type_traits<type> (the block size, and quant's QI) and get_vdr_mmvq(type)
// (mmvq.cu; the VDR_*_Q8_1_MMVQ of vecdotq.cuh).
type MMVQConsts struct {
	QK, QI, VDR int
}

// mmvqVDR is get_vdr_mmvq (mmvq.cu) for the types get_vec_dot_q_cuda lists (mmvq.cu):
// exactly the types with a mul_mat_vec_q kernel. IQ1_S and IQ1_M take the default 1, which
// is also their VDR_IQ1_*_Q8_1_MMVQ.
var mmvqVDR = map[quant.Type]int{
	quant.Q1_0: 1, quant.Q2_0: 1, quant.Q4_0: 2, quant.Q4_1: 2, quant.Q5_0: 2, quant.Q5_1: 2,
	quant.Q8_0: 2, quant.MXFP4: 2, quant.NVFP4: 4, quant.Q2_K: 1, quant.Q3_K: 1, quant.Q4_K: 2,
	quant.Q5_K: 2, quant.Q6_K: 1, quant.IQ2_XXS: 2, quant.IQ2_XS: 2, quant.IQ2_S: 2,
	quant.IQ3_XXS: 2, quant.IQ3_S: 2, quant.IQ1_S: 1, quant.IQ1_M: 1, quant.IQ4_NL: 2,
	quant.IQ4_XS: 4,
}

// HasMMVQKernel reports whether ggml compiles a mul_mat_vec_q kernel for t
// (get_vec_dot_q_cuda in mmvq.cu is not nullptr; mul_mat_vec_q_switch_type aborts for
// any other type).
func HasMMVQKernel(t quant.Type) bool {
	_, ok := mmvqVDR[t]
	return ok
}

// MMVQConstsOf returns the constants of t's mul_mat_vec_q kernel, or false if ggml has
// none (see HasMMVQKernel).
func MMVQConstsOf(t quant.Type) (MMVQConsts, bool) {
	vdr, ok := mmvqVDR[t]
	if !ok {
		return MMVQConsts{}, false
	}
	c, err := quant.CodecOf(t)
	if err != nil || c.QI <= 0 {
		return MMVQConsts{}, false
	}
	return MMVQConsts{QK: t.BlockSize(), QI: c.QI, VDR: vdr}, true
}

package tiling

import (
	"fmt"

	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
)

//go:generate go run gen_mmqconfig.go -ggml $GGML_DIR

// MMQ constants of mmq.cuh.
const (
	// MMQIterK is MMQ_ITER_K, the K_vram of every table row but Blackwell's FP4 rows.
	MMQIterK = 256
	// MMQIterKFP4 is MMQ_ITER_K_FP4, K_vram of Blackwell's native FP4 rows.
	MMQIterKFP4 = 512
	// MMQTileNeK is MMQ_TILE_NE_K: 32-bit elements of quantized data per tile K step.
	MMQTileNeK = 32
	// MMQJMax is the largest J mul_mat_q_switch_J tries; MMQJStep is its step.
	MMQJMax  = 128
	MMQJStep = 8
	// MMQFallbackRows: mmq.cu sets fallback = ne01 % 128 != 0.
	MMQFallbackRows = 128
)

// MMQArch names the mmq-config-<arch>.cuh table a device uses.
type MMQArch int

// The config tables of src/ggml-cuda (mmq-config-*.cuh).
const (
	MMQArchPascal MMQArch = iota
	MMQArchAmpere
	MMQArchBlackwell // falls back to the ampere table for every type it does not list
	MMQArchCDNA
	MMQArchRDNA2
	MMQArchRDNA3
	MMQArchRDNA3_5
	MMQArchRDNA4
)

var mmqArchFiles = [...]string{"mmq-config-pascal.cuh", "mmq-config-ampere.cuh", "mmq-config-blackwell.cuh",
	"mmq-config-cdna.cuh", "mmq-config-rdna2.cuh", "mmq-config-rdna3.cuh", "mmq-config-rdna3-5.cuh", "mmq-config-rdna4.cuh"}

// File returns the ggml file of the table ("mmq-config-ampere.cuh").
func (a MMQArch) File() string {
	if a >= 0 && int(a) < len(mmqArchFiles) {
		return mmqArchFiles[a]
	}
	return fmt.Sprintf("MMQArch(%d)", int(a))
}

// String returns the table's name as ggml spells its function suffix ("ampere").
func (a MMQArch) String() string {
	f := a.File()
	if len(f) > len("mmq-config-.cuh") && f[:11] == "mmq-config-" {
		return f[11 : len(f)-4]
	}
	return f
}

// MMQArchOf is the table selection of the host ggml_cuda_mmq_get_config (mmq.cuh): on AMD
// CDNA, RDNA4, RDNA3.5, RDNA3 (3.0) or else RDNA2; on NVIDIA blackwell when
// blackwell_mma_available, ampere when the highest compiled arch is >= 700 (Volta,
// Turing, Ampere, Ada, Hopper), else pascal.
func MMQArchOf(dev *sim.Device) MMQArch {
	cc := dev.CC
	if sim.CCIsAMD(cc) {
		switch {
		case sim.CCIsCDNA(cc):
			return MMQArchCDNA
		case sim.CCIsRDNA4(cc):
			return MMQArchRDNA4
		case sim.CCIsRDNA3_5(cc):
			return MMQArchRDNA3_5
		case sim.CCIsRDNA3(cc):
			return MMQArchRDNA3
		}
		return MMQArchRDNA2
	}
	hc := dev.HighestCompiledArch()
	if sim.BlackwellMMAAvailable(cc, hc) {
		return MMQArchBlackwell
	}
	if hc >= sim.CCVolta {
		return MMQArchAmpere
	}
	return MMQArchPascal
}

// SRAMLayout is ggml_cuda_mmq_sram_layout: the layout (and row stride) of the x tile in
// shared memory in the MMA data layout.
type SRAMLayout int

// The layouts of mmq.cuh.
const (
	SRAMQ8_0 SRAMLayout = iota
	SRAMQ8_1
	SRAMQ2_K
	SRAMQ3_K
	SRAMQ6_K
	SRAMFP4   // MXFP4 and NVFP4 on Blackwell
	SRAMNVFP4 // generic NVFP4
)

var sramNames = [...]string{"Q8_0", "Q8_1", "Q2_K", "Q3_K", "Q6_K", "FP4", "NVFP4"}

func (l SRAMLayout) String() string {
	if l >= 0 && int(l) < len(sramNames) {
		return sramNames[l]
	}
	return fmt.Sprintf("SRAMLayout(%d)", int(l))
}

// Stride is ggml_cuda_mmq_get_sram_stride: the x tile row length in 32-bit elements
// (quantized data, scales, padding; % 8 == 4 against bank conflicts), or -1.
func (l SRAMLayout) Stride() int {
	switch l {
	case SRAMQ8_0:
		return 2*MMQTileNeK + 2*MMQTileNeK/quant.QI8_0 + 4
	case SRAMQ8_1:
		return 2*MMQTileNeK + 2*MMQTileNeK/quant.QI8_1 + 4
	case SRAMQ2_K:
		return 2*MMQTileNeK + MMQTileNeK + 4
	case SRAMQ3_K:
		return 2*MMQTileNeK + MMQTileNeK/2 + 4
	case SRAMQ6_K:
		return 2*MMQTileNeK + MMQTileNeK/quant.QI6_K + MMQTileNeK/8 + 7
	case SRAMFP4:
		return 2*MMQTileNeK + 8 + 4
	case SRAMNVFP4:
		return 2*MMQTileNeK + MMQTileNeK/2 + 4
	}
	return -1
}

// mmqRow is one CASE(type, nthreads, occupancy, I, J, sram_layout, K_vram, stream_k,
// fallback) line; line is its line number in the table's file.
type mmqRow struct {
	typ                 quant.Type
	nthreads, occupancy int
	i, j                int
	layout              SRAMLayout
	kvram               int
	streamK, fallback   bool
	line                int
}

// MMQConfig is ggml_cuda_mmq_config for one (type, J, fallback) on one device.
type MMQConfig struct {
	Type quant.Type
	// NThreads is the threads per CUDA block (nwarps = NThreads / warp size).
	NThreads int
	// Occupancy is the targeted occupancy (__launch_bounds__ min blocks).
	Occupancy int
	// I is the tile size in the src0 row (dst ne0) direction (mmq_y of older ggml).
	I int
	// J is the tile size in the src1 column (dst ne1) direction (mmq_x).
	J int
	// SRAM is the shared-memory layout of the x tile (MMA data layout).
	SRAM SRAMLayout
	// KVRAM is the K values loaded per tile iteration (ITER_K).
	KVRAM int
	// StreamK says whether mul_mat_q uses the stream-K decomposition.
	StreamK bool
	// Fallback: the kernel checks rows against nrows (src0 rows not a multiple of 128).
	Fallback bool
	// UseMMADataLayout is the host use_mma_data_layout(cc): amd_mfma_available,
	// amd_wmma_available or turing_mma_available (false on a sim.Device with
	// NoTuringMMA): the MMA tile layout instead of the dp4a one.
	UseMMADataLayout bool
	// Arch is the table the row was read from; Source its file and line
	// ("mmq-config-ampere.cuh:2").
	Arch   MMQArch
	Source string
}

type mmqKey struct {
	arch     MMQArch
	typ      quant.Type
	j        int
	fallback bool
}

// mmqIndex maps (table, type, J, fallback) to the first CASE that matches, as the
// chain of ifs in each table function returns the first match.
var mmqIndex = func() map[mmqKey]mmqRow {
	m := map[mmqKey]mmqRow{}
	for arch, rows := range mmqConfigRows {
		for _, r := range rows {
			k := mmqKey{arch, r.typ, r.j, r.fallback}
			if _, dup := m[k]; !dup {
				m[k] = r
			}
		}
	}
	return m
}()

// MMQConfigOf is ggml_cuda_mmq_get_config(type, J, fallback, cc) on dev: the CASE of the
// device's table (MMQArchOf; Blackwell continues in the ampere table). ok is false where
// ggml returns the GGML_TYPE_COUNT ("not available") config.
func MMQConfigOf(dev *sim.Device, t quant.Type, J int, fallback bool) (cfg MMQConfig, ok bool) {
	arch := MMQArchOf(dev)
	r, ok := mmqIndex[mmqKey{arch, t, J, fallback}]
	src := arch
	if !ok && arch == MMQArchBlackwell {
		src = MMQArchAmpere
		r, ok = mmqIndex[mmqKey{src, t, J, fallback}]
	}
	if !ok {
		return MMQConfig{}, false
	}
	return MMQConfig{
		Type: r.typ, NThreads: r.nthreads, Occupancy: r.occupancy, I: r.i, J: r.j, SRAM: r.layout,
		KVRAM: r.kvram, StreamK: r.streamK, Fallback: r.fallback,
		UseMMADataLayout: UseMMADataLayout(dev),
		Arch:             src, Source: fmt.Sprintf("%s:%d", src.File(), r.line),
	}, true
}

// UseMMADataLayout is ggml_cuda_mmq_config::use_mma_data_layout(cc) (mmq.cuh):
// amd_mfma_available || amd_wmma_available || turing_mma_available. It is a function of
// the device (and its build) only.
func UseMMADataLayout(dev *sim.Device) bool {
	return sim.AMDMFMAAvailable(dev.CC) || sim.AMDWMMAAvailable(dev.CC) || dev.TuringMMA()
}

// TileXSizes is tile_x_sizes: 32-bit elements of the dp4a-layout x tile for quantized
// data, scales (dm) and sub-scales (sc).
type TileXSizes struct{ QS, DM, SC int }

// DP4ATileXSizes is mmq_get_dp4a_tile_x_sizes(type, I) (mmq.cuh, the MMQ_DP4A_TXS_*
// macros), zero for a type without MMQ.
func DP4ATileXSizes(t quant.Type, I int) TileXSizes {
	const k = MMQTileNeK
	q40 := TileXSizes{I*k + I, I*k/quant.QI4_0 + I/quant.QI4_0, 0}
	q41 := TileXSizes{I*k + I, I*k/quant.QI4_1 + I/quant.QI4_1, 0}
	q80 := TileXSizes{I*k*2 + I, I*k*2/quant.QI8_0 + I/(quant.QI8_0/2), 0}
	q80x16 := TileXSizes{I*k*2 + I, I*k*4/quant.QI8_0 + I/(quant.QI8_0/4), 0}
	q81 := TileXSizes{I*k*2 + I, I*k*2/quant.QI8_1 + I/(quant.QI8_1/2), 0}
	switch t {
	case quant.Q1_0, quant.Q2_0, quant.Q5_0, quant.Q8_0, quant.IQ2_XXS, quant.IQ3_XXS, quant.IQ3_S,
		quant.IQ1_S, quant.IQ4_XS, quant.IQ4_NL:
		return q80
	case quant.Q4_0:
		return q40
	case quant.Q4_1:
		return q41
	case quant.Q5_1, quant.MXFP4:
		return q81
	case quant.NVFP4, quant.IQ2_XS, quant.IQ2_S:
		return q80x16
	case quant.Q2_K:
		return TileXSizes{I*k*2 + I, I*k + I, 0}
	case quant.Q3_K:
		return TileXSizes{I*k*2 + I, I, I*k/8 + I/8}
	case quant.Q4_K:
		return TileXSizes{I*k + I, I * k / quant.QI4_K, I*k/8 + I/8}
	case quant.Q5_K:
		return TileXSizes{I*k*2 + I, I*k/quant.QI5_K + I/quant.QI5_K, I*k/8 + I/8}
	case quant.Q6_K:
		return TileXSizes{I*k*2 + I, I*k/quant.QI6_K + I/quant.QI6_K, I*k/8 + I/8}
	}
	return TileXSizes{}
}

// BlockQ8_1MMQBytes is sizeof(block_q8_1_mmq) = 4*sizeof(block_q8_1) (mmq.cuh
// static_assert); also sizeof(block_fp4_mmq).
var BlockQ8_1MMQBytes = 4 * quant.Q8_1.TypeSize()

// MMQNBytesSharedX is ggml_cuda_mmq_get_nbytes_shared_x: I*sram_stride*4 in the MMA
// layout, (qs+dm+sc)*4 of DP4ATileXSizes otherwise.
func MMQNBytesSharedX(c MMQConfig) int {
	if c.UseMMADataLayout {
		return c.I * c.SRAM.Stride() * 4
	}
	s := DP4ATileXSizes(c.Type, c.I)
	return (s.QS + s.DM + s.SC) * 4
}

// MMQNBytesShared is mmq_get_nbytes_shared (mmq.cuh): the dynamic shared memory of
// mul_mat_q, J*sizeof(int) for the ids + the x tile + the y tile
// J*sizeof(block_q8_1_mmq) padded to a multiple of nthreads*sizeof(int).
func MMQNBytesShared(c MMQConfig) int {
	nbsIDs := c.J * 4
	nbsX := MMQNBytesSharedX(c)
	nbsY := c.J * BlockQ8_1MMQBytes
	return nbsIDs + nbsX + pad(nbsY, c.NThreads*4)
}

// pad is GGML_PAD(x, n): x rounded up to a multiple of n.
func pad(x, n int) int { return (x + n - 1) / n * n }

// MMQFallback is mmq.cu's fallback = ne01 % 128 != 0.
func MMQFallback(nrows int64) bool { return nrows%MMQFallbackRows != 0 }

// JStep is one iteration of mul_mat_q_switch_J's loop.
type JStep struct {
	J int
	// Available is false where the table has no CASE (GGML_TYPE_COUNT): skipped.
	Available bool
	// Source is the CASE's file:line when Available.
	Source string
	// NBytesShared is mmq_get_nbytes_shared of the config; OverSmpbo is true where it
	// exceeds the device's smpbo: skipped.
	NBytesShared int
	OverSmpbo    bool
	// NTilesX is ceil(ncols_max / J) for a candidate; Chosen says the step became the
	// best so far (ntiles_x < ntiles_J_best).
	NTilesX int
	Chosen  bool
}

// JSearch is the result of mul_mat_q_switch_J: the J launched and every step tried.
type JSearch struct {
	J     int // J_best; 0 if no config was usable (ggml then aborts)
	Steps []JStep
}

// MMQSearchJ is mul_mat_q_switch_J<type, fallback> (mmq.cuh): for J = 8, 16, ..., 128
// while the best tile count is > 1, skip configs the table lacks and those whose shared
// memory exceeds smpbo, and keep the first J that strictly lowers ceil(ncols_max/J): the
// smallest available J reaching the minimal number of column tiles.
func MMQSearchJ(dev *sim.Device, t quant.Type, ncolsMax int64, fallback bool) JSearch {
	var res JSearch
	best := int64(1<<31 - 1) // INT_MAX
	for J := MMQJStep; J <= MMQJMax && best > 1; J += MMQJStep {
		st := JStep{J: J}
		cfg, ok := MMQConfigOf(dev, t, J, fallback)
		st.Available = ok
		if ok {
			st.Source = cfg.Source
			st.NBytesShared = MMQNBytesShared(cfg)
			st.OverSmpbo = st.NBytesShared > dev.SmemPerBlockOptin
			if !st.OverSmpbo {
				n := (ncolsMax + int64(cfg.J) - 1) / int64(cfg.J)
				st.NTilesX = int(n)
				if n < best {
					best, res.J, st.Chosen = n, J, true
				}
			}
		}
		res.Steps = append(res.Steps, st)
	}
	return res
}

// MMQPlan is the launch of mul_mat_q for one MUL_MAT or MUL_MAT_ID that does not depend on
// the stream-K partition (package streamk computes that from NTiles, BlocksPerNe00,
// BlocksPerIter and the device's SM count).
type MMQPlan struct {
	Config MMQConfig
	Search JSearch
	// NBytesShared is mmq_get_nbytes_shared(config); NWarps = NThreads / warp size.
	NBytesShared int
	NWarps       int
	// NRowsX is nrows_x (ne01), NColsMax is ncols_max (ne11, or ne12 tokens for
	// MUL_MAT_ID), NChannelsY*NSamplesY = NTZW (ne12*ne13, or ne02 experts for MUL_MAT_ID).
	NRowsX, NColsMax int64
	// NTY = ceil(nrows_x/I), NTX = ceil(ncols_max/J), NTZW = nchannels_y*nsamples_y and
	// NTiles = NTX*NTY*NTZW (launch_mul_mat_q: the tiling grid, or ntiles_dst).
	NTY, NTX, NTZW, NTiles int
	// BlocksPerNe00 = ncols_x/qk (src0 blocks per row); BlocksPerIter = K_vram/qk.
	BlocksPerNe00, BlocksPerIter int
	// UseNativeFP4 is use_native_fp4 (mmq.cu): blackwell_mma_available and MXFP4/NVFP4:
	// activations in block_fp4_mmq instead of block_q8_1_mmq.
	UseNativeFP4 bool
}

// MakeMMQPlan returns the MMQ launch ggml_cuda_mul_mat_q makes for a src0 of type t on dev
// (MUL_MAT when s.Experts == 0, MUL_MAT_ID otherwise): fallback from ne01, the J search,
// the config and the tile counts. It returns an error for a bad shape, a type without MMQ
// (ggml_cuda_should_use_mmq's list), or when no J is usable (ggml aborts: J_best=0).
// Whether ggml dispatches MMQ at all is Decide's question, not checked here.
func MakeMMQPlan(dev *sim.Device, t quant.Type, s Shape) (*MMQPlan, error) {
	if err := s.Check(t); err != nil {
		return nil, err
	}
	if !mmqTypes[t] {
		return nil, fmt.Errorf("tiling: ggml has no mul_mat_q for %v", t)
	}
	if dev.WarpSize <= 0 {
		return nil, fmt.Errorf("tiling: device %q has warp size %d", dev.Name, dev.WarpSize)
	}
	fallback := MMQFallback(s.N)
	p := &MMQPlan{NRowsX: s.N, NColsMax: s.M}
	p.Search = MMQSearchJ(dev, t, s.M, fallback)
	if p.Search.J == 0 {
		return nil, fmt.Errorf("tiling: no MMQ config of %v (fallback=%v) fits %d bytes of shared memory on %q: ggml aborts (J_best=0)", t, fallback, dev.SmemPerBlockOptin, dev.Name)
	}
	cfg, _ := MMQConfigOf(dev, t, p.Search.J, fallback)
	p.Config = cfg
	p.NBytesShared = MMQNBytesShared(cfg)
	p.NWarps = cfg.NThreads / dev.WarpSize
	ntzw := s.batch()
	if s.ID() {
		ntzw = s.Experts
	}
	qk := t.BlockSize()
	p.NTY = int((s.N + int64(cfg.I) - 1) / int64(cfg.I))
	p.NTX = int((s.M + int64(cfg.J) - 1) / int64(cfg.J))
	p.NTZW = int(ntzw)
	p.NTiles = p.NTX * p.NTY * p.NTZW
	p.BlocksPerNe00 = int(s.K / int64(qk))
	p.BlocksPerIter = cfg.KVRAM / qk
	p.UseNativeFP4 = sim.BlackwellMMAAvailable(dev.CC, dev.HighestCompiledArch()) && (t == quant.MXFP4 || t == quant.NVFP4)
	return p, nil
}

func (p *MMQPlan) String() string {
	c := p.Config
	return fmt.Sprintf("mul_mat_q<%v, J=%d, fallback=%v> (%s) nthreads=%d occupancy=%d I=%d sram=%v K_vram=%d stream_k=%v mma_layout=%v smem=%d nty=%d ntx=%d ntzw=%d ntiles=%d blocks_per_ne00=%d blocks_per_iter=%d",
		c.Type, c.J, c.Fallback, c.Source, c.NThreads, c.Occupancy, c.I, c.SRAM, c.KVRAM, c.StreamK, c.UseMMADataLayout,
		p.NBytesShared, p.NTY, p.NTX, p.NTZW, p.NTiles, p.BlocksPerNe00, p.BlocksPerIter)
}

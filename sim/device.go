package sim

import (
	"errors"
	"fmt"
	"strings"
)

// Compute-capability constants, ported from ggml's src/ggml-cuda/common.cuh (commit
// d99724f2b141). NVIDIA: 100*major + 10*minor. AMD: GGML_CUDA_CC_OFFSET_AMD plus the gfx
// architecture id read as hex (gfx942 -> 0x942, gfx1100 -> 0x1100), as
// ggml_cuda_parse_id does. Moore Threads: GGML_CUDA_CC_OFFSET_MTHREADS + 0x100*major +
// 0x10*minor.
const (
	CCPascal       = 600
	CCDP4A         = 610 // minimum for __dp4a
	CCVolta        = 700
	CCTuring       = 750
	CCAmpere       = 800
	CCAdaLovelace  = 890
	CCHopper       = 900
	CCBlackwell    = 1200
	CCDGXSpark     = 1210
	CCRubin        = 1300
	CCOffsetAMD    = 0x1000000
	CCOffsetMThrds = 0x0100000

	CCGCN4    = CCOffsetAMD + 0x803  // Tonga, Fiji, Polaris: minimum for fast fp16
	CCVega    = CCOffsetAMD + 0x900  // Vega56/64: minimum for fp16 dual issue
	CCVega20  = CCOffsetAMD + 0x906  // MI50/Radeon VII: minimum for dp4a
	CCCDNA1   = CCOffsetAMD + 0x908  // MI100: minimum for MFMA
	CCCDNA2   = CCOffsetAMD + 0x90a  // MI210
	CCCDNA3   = CCOffsetAMD + 0x942  // MI300
	CCCDNA4   = CCOffsetAMD + 0x950  // MI350X/MI355X
	CCRDNA1   = CCOffsetAMD + 0x1010 // RX 5000
	CCRDNA2   = CCOffsetAMD + 0x1030 // RX 6000: minimum for dp4a
	CCRDNA3   = CCOffsetAMD + 0x1100 // RX 7000: minimum for WMMA
	CCRDNA3_5 = CCOffsetAMD + 0x1150 // AI 370, AI Max 395
	CCRDNA4   = CCOffsetAMD + 0x1200 // RX 9000

	CCQY1 = CCOffsetMThrds + 0x210 // MTT S80, S3000
	CCQY2 = CCOffsetMThrds + 0x220 // MTT S4000
	CCPH1 = CCOffsetMThrds + 0x310 // MTT S5000
)

// CC classification, as the GGML_CUDA_CC_IS_* macros.
func CCIsNVIDIA(cc int) bool   { return cc < CCOffsetMThrds }
func CCIsAMD(cc int) bool      { return cc >= CCOffsetAMD }
func CCIsMThreads(cc int) bool { return cc >= CCOffsetMThrds && cc < CCOffsetAMD }
func CCIsRDNA(cc int) bool     { return cc >= CCRDNA1 }
func CCIsRDNA1(cc int) bool    { return cc >= CCRDNA1 && cc < CCRDNA2 }
func CCIsRDNA2(cc int) bool    { return cc >= CCRDNA2 && cc < CCRDNA3 }
func CCIsRDNA3_0(cc int) bool  { return cc >= CCRDNA3 && cc < CCRDNA3_5 }
func CCIsRDNA3_5(cc int) bool  { return cc >= CCRDNA3_5 && cc < CCRDNA4 }
func CCIsRDNA3(cc int) bool    { return CCIsRDNA3_0(cc) || CCIsRDNA3_5(cc) }
func CCIsRDNA4(cc int) bool    { return cc >= CCRDNA4 }
func CCIsGCN(cc int) bool      { return cc > CCOffsetAMD && cc < CCCDNA1 }
func CCIsCDNA(cc int) bool     { return cc >= CCCDNA1 && cc < CCRDNA1 }
func CCIsCDNA1(cc int) bool    { return cc >= CCCDNA1 && cc < CCCDNA2 }
func CCIsCDNA2(cc int) bool    { return cc >= CCCDNA2 && cc < CCCDNA3 }
func CCIsCDNA3(cc int) bool    { return cc >= CCCDNA3 && cc < CCCDNA4 }
func CCIsCDNA4(cc int) bool    { return cc >= CCCDNA4 && cc < CCRDNA1 }
func CCIsQY1(cc int) bool      { return cc >= CCQY1 && cc < CCQY2 }
func CCIsQY2(cc int) bool      { return cc >= CCQY2 && cc < CCPH1 }
func CCIsPH1(cc int) bool      { return cc >= CCPH1 }

// CCFromGfx returns ggml's cc for an AMD gcnArchName such as "gfx942",
// "gfx1100:xnack-" or "gfx11-generic", as ggml_cuda_parse_id computes it: the leading
// "gfx" and any ":feature" suffix are dropped; a "-generic" name "gfxMM-N-generic" gives
// CCOffsetAMD + 0x100*MM + 0x10*N (hex); otherwise the last two hex digits are minor and
// stepping and the rest is the major version. The error says what is wrong; ggml then
// falls back to major/minor from the device properties.
func CCFromGfx(name string) (int, error) {
	if !strings.HasPrefix(name, "gfx") || len(name) <= 3 {
		return 0, fmt.Errorf("sim: AMD arch name %q does not start with \"gfx\" followed by an id", name)
	}
	arch := name[3:]
	if i := strings.IndexByte(arch, ':'); i >= 0 {
		arch = arch[:i]
	}
	parseHex := func(s string) (int, error) {
		if s == "" || len(s) > 6 {
			return 0, fmt.Errorf("sim: AMD arch name %q: bad hex field %q", name, s)
		}
		v := 0
		for _, r := range s {
			var d int
			switch {
			case r >= '0' && r <= '9':
				d = int(r - '0')
			case r >= 'a' && r <= 'f':
				d = int(r-'a') + 10
			case r >= 'A' && r <= 'F':
				d = int(r-'A') + 10
			default:
				return 0, fmt.Errorf("sim: AMD arch name %q: bad hex field %q", name, s)
			}
			v = v*16 + d
		}
		return v, nil
	}
	var major, minor int
	var err error
	switch {
	case len(arch) > 8:
		g, ok := strings.CutSuffix(arch, "-generic")
		if !ok {
			return 0, fmt.Errorf("sim: AMD arch name %q: long id without -generic", name)
		}
		parts := strings.SplitN(g, "-", 2)
		if major, err = parseHex(parts[0]); err != nil {
			return 0, err
		}
		if len(parts) == 2 {
			if minor, err = parseHex(parts[1]); err != nil {
				return 0, err
			}
			minor *= 0x10
		}
	case len(arch) >= 3:
		if minor, err = parseHex(arch[len(arch)-2:]); err != nil {
			return 0, err
		}
		if major, err = parseHex(arch[:len(arch)-2]); err != nil {
			return 0, err
		}
	default:
		return 0, fmt.Errorf("sim: AMD arch name %q: id %q too short", name, arch)
	}
	cc := CCOffsetAMD + major*0x100 + minor
	if cc&0xff00 == 0 {
		return 0, fmt.Errorf("sim: AMD arch name %q gives cc %#x with no major version (ggml warns and falls back)", name, cc)
	}
	return cc, nil
}

// HighestCompiledArch is ggml_cuda_highest_compiled_arch(cc) for a build whose
// __CUDA_ARCH_LIST__ is archs: the largest entry <= cc, or -1 if there is none. A nil or
// empty archs means a native build (GGML_NATIVE, or any HIP/MUSA build, where ggml uses
// the identity): it returns cc.
func HighestCompiledArch(cc int, archs []int) int {
	if len(archs) == 0 {
		return cc
	}
	cur := 0
	for _, a := range archs {
		if a <= cc && a > cur {
			cur = a
		}
	}
	if cur == 0 {
		return -1
	}
	return cur
}

// Feature predicates ported from common.cuh. Each takes the device's cc and hc, the
// highest compiled arch (HighestCompiledArch(cc, archs); pass hc = cc for a native build).

// FP16Available is fp16_available.
func FP16Available(cc, hc int) bool {
	return hc >= CCPascal || (CCIsMThreads(cc) && cc >= CCPH1)
}

// FastFP16Available is fast_fp16_available.
func FastFP16Available(cc, hc int) bool {
	return CCIsAMD(cc) ||
		(CCIsNVIDIA(cc) && FP16Available(cc, hc) && hc != 610) ||
		(CCIsMThreads(cc) && FP16Available(cc, hc))
}

// FastFP16HardwareAvailable is fast_fp16_hardware_available.
func FastFP16HardwareAvailable(cc int) bool {
	return (CCIsNVIDIA(cc) && cc >= CCPascal && cc != 610) || CCIsAMD(cc) ||
		(CCIsMThreads(cc) && cc >= CCQY2)
}

// FP16MMAHardwareAvailable is fp16_mma_hardware_available.
func FP16MMAHardwareAvailable(cc int) bool {
	return (CCIsNVIDIA(cc) && cc >= CCVolta) ||
		CCIsCDNA(cc) || CCIsRDNA3(cc) || CCIsRDNA4(cc) ||
		(CCIsMThreads(cc) && cc >= CCQY2)
}

// BF16MMAHardwareAvailable is bf16_mma_hardware_available.
func BF16MMAHardwareAvailable(cc int) bool {
	return (CCIsNVIDIA(cc) && cc >= CCAmpere) ||
		CCIsCDNA(cc) || cc >= CCRDNA3 ||
		(CCIsMThreads(cc) && cc >= CCPH1)
}

// FP32MMAHardwareAvailable is fp32_mma_hardware_available.
func FP32MMAHardwareAvailable(cc int) bool { return CCIsCDNA(cc) }

// AMDMFMAAvailable is amd_mfma_available (built without GGML_HIP_NO_MMQ_MFMA).
func AMDMFMAAvailable(cc int) bool { return CCIsCDNA(cc) }

// AMDWMMAAvailable is amd_wmma_available.
func AMDWMMAAvailable(cc int) bool { return CCIsRDNA4(cc) || CCIsRDNA3(cc) }

// VoltaMMAAvailable is volta_mma_available.
func VoltaMMAAvailable(cc, hc int) bool { return CCIsNVIDIA(cc) && hc == CCVolta }

// TuringMMAAvailable is turing_mma_available (int8 mma.sync m16n8k32 used by MMQ).
func TuringMMAAvailable(cc, hc int) bool { return CCIsNVIDIA(cc) && hc >= CCTuring }

// AmpereMMAAvailable is ampere_mma_available.
func AmpereMMAAvailable(cc, hc int) bool { return CCIsNVIDIA(cc) && hc >= CCAmpere }

// CPAsyncAvailable is cp_async_available.
func CPAsyncAvailable(cc, hc int) bool { return CCIsNVIDIA(cc) && hc >= CCAmpere }

// BlackwellMMAAvailable is blackwell_mma_available.
func BlackwellMMAAvailable(cc, hc int) bool {
	return CCIsNVIDIA(cc) && hc >= CCBlackwell && hc < CCRubin
}

// HasDP4A reports whether the device has a hardware 4-way int8 dot product that
// ggml_cuda_dp4a uses: NVIDIA cc >= GGML_CUDA_CC_DP4A (6.1); AMD gfx906 (Vega20), CDNA,
// RDNA2 and newer (sdot4/sudot4); Moore Threads (ggml uses __dp4a under MUSA). On others
// ggml computes the same value in scalar code, so this affects speed, not bits.
func HasDP4A(cc int) bool {
	switch {
	case CCIsNVIDIA(cc):
		return cc >= CCDP4A
	case CCIsMThreads(cc):
		return true
	}
	return cc == CCVega20 || CCIsCDNA(cc) || cc >= CCRDNA2
}

// HasInt8MMA reports whether ggml's MMQ has an int8 matrix-core path on the device:
// turing_mma_available on NVIDIA, amd_mfma_available or amd_wmma_available on AMD.
func HasInt8MMA(cc, hc int) bool {
	return TuringMMAAvailable(cc, hc) || AMDMFMAAvailable(cc) || AMDWMMAAvailable(cc)
}

// Vendor is a GPU vendor.
type Vendor string

// Vendors.
const (
	NVIDIA   Vendor = "NVIDIA"
	AMD      Vendor = "AMD"
	MThreads Vendor = "MooreThreads"
)

// Device describes a GPU as ggml sees it (ggml_cuda_device_info) plus the features its
// kernels branch on. Devices are plain values: a user may write one by hand (then call
// Validate) or take one from Catalog / Lookup.
type Device struct {
	Name   string
	Vendor Vendor
	// CC is ggml's compute capability: 100*major+10*minor on NVIDIA (900 for 9.0),
	// CCOffsetAMD + gfx id on AMD (gfx942 -> 0x1000942).
	CC int
	// SMCount is cudaDeviceProp.multiProcessorCount (AMD: compute units). ggml's nsm; a
	// MIG slice reports fewer.
	SMCount int
	// WarpSize is cudaDeviceProp.warpSize (32 on NVIDIA and RDNA, 64 on GCN/CDNA).
	WarpSize int
	// SmemPerBlock is sharedMemPerBlock in bytes (ggml's smpb).
	SmemPerBlock int
	// SmemPerBlockOptin is ggml's smpbo in bytes: sharedMemPerBlockOptin on NVIDIA,
	// sharedMemPerBlock on AMD (ggml sets it so under HIP).
	SmemPerBlockOptin int
	// ArchList is the __CUDA_ARCH_LIST__ the ggml build was compiled for (e.g.
	// {750, 800, 860, 890, 900}); nil means a native build for CC.
	ArchList []int
	// NoTuringMMA describes a ggml build in which the int8 tensor-core path is switched
	// off on an NVIDIA device that has it: TURING_MMA_AVAILABLE left undefined in
	// common.cuh and the host turing_mma_available(cc) returning false although the
	// highest compiled arch is >= 7.5 (e.g. a hand-written "cc 9.0 without int8 MMA").
	// MMQ then uses the dp4a data layout and ggml_cuda_should_use_mmq the Pascal/Volta
	// rules. ggml has no such build option: it is a what-if, valid only for NVIDIA.
	// The zero value (false) is every real build.
	NoTuringMMA bool
	// ForceMMQ describes a ggml build with GGML_CUDA_FORCE_MMQ defined for mmq.cu:
	// ggml_cuda_should_use_mmq then answers true for every MMQ type wherever the highest
	// compiled arch has dp4a, before its batch-size rules (which only matter without
	// int8 MMA). The zero value (false) is the default build.
	ForceMMQ bool
	// DP4A, Int8MMA and FastFP16 must equal HasDP4A(CC), d.HasInt8MMA() and
	// FastFP16Available(CC, hc) (Validate checks); they are stored so that a catalog
	// entry reads as a table row.
	DP4A     bool
	Int8MMA  bool
	FastFP16 bool
	// Source says where the figures come from.
	Source string
}

// HasInt8MMA is HasInt8MMA(d.CC, hc) for the device's build, false for the int8
// tensor-core path of an NVIDIA device with NoTuringMMA.
func (d *Device) HasInt8MMA() bool {
	return d.TuringMMA() || AMDMFMAAvailable(d.CC) || AMDWMMAAvailable(d.CC)
}

// HighestCompiledArch returns HighestCompiledArch(d.CC, d.ArchList).
func (d *Device) HighestCompiledArch() int { return HighestCompiledArch(d.CC, d.ArchList) }

// TuringMMA, AmpereMMA, ... are the common.cuh predicates for d (see the package-level
// functions of the same names).
func (d *Device) TuringMMA() bool {
	return TuringMMAAvailable(d.CC, d.HighestCompiledArch()) && !d.NoTuringMMA
}
func (d *Device) AmpereMMA() bool    { return AmpereMMAAvailable(d.CC, d.HighestCompiledArch()) }
func (d *Device) VoltaMMA() bool     { return VoltaMMAAvailable(d.CC, d.HighestCompiledArch()) }
func (d *Device) BlackwellMMA() bool { return BlackwellMMAAvailable(d.CC, d.HighestCompiledArch()) }
func (d *Device) AMDMFMA() bool      { return AMDMFMAAvailable(d.CC) }
func (d *Device) AMDWMMA() bool      { return AMDWMMAAvailable(d.CC) }
func (d *Device) FP16MMA() bool      { return FP16MMAHardwareAvailable(d.CC) }
func (d *Device) FastFP16Avail() bool {
	return FastFP16Available(d.CC, d.HighestCompiledArch())
}

const kib = 1024

// catalog: NVIDIA compute capabilities and per-block shared memory limits from the CUDA
// C++ Programming Guide, "Compute Capabilities" tables (technical specifications per
// compute capability: maximum shared memory per block 48 KiB without opt-in; opt-in
// 227 KiB on 9.0, 163 KiB on 8.0, 99 KiB on 8.6/8.9/12.0, 64 KiB on 7.5, 96 KiB on 7.0,
// 48 KiB on 6.x). SM counts from NVIDIA's product pages and architecture whitepapers.
// AMD CU counts and LDS sizes from AMD's product specifications and the CDNA3/RDNA3
// ISA documentation; ggml sets smpbo = sharedMemPerBlock under HIP.
var catalog = []Device{
	{Name: "H200", Vendor: NVIDIA, CC: 900, SMCount: 132, WarpSize: 32, SmemPerBlock: 48 * kib, SmemPerBlockOptin: 227 * kib,
		DP4A: true, Int8MMA: true, FastFP16: true,
		Source: "H200 SXM: CC 9.0 and 227 KiB opt-in smem per CUDA Programming Guide compute-capability table; 132 SMs per NVIDIA H200 product brief (same GH100 configuration as H100 SXM5); 132 SMs also in the reference brief"},
	{Name: "H100 SXM", Vendor: NVIDIA, CC: 900, SMCount: 132, WarpSize: 32, SmemPerBlock: 48 * kib, SmemPerBlockOptin: 227 * kib,
		DP4A: true, Int8MMA: true, FastFP16: true,
		Source: "CC 9.0 per CUDA Programming Guide; 132 SMs per NVIDIA H100 Tensor Core GPU Architecture whitepaper (H100 SXM5)"},
	{Name: "H100 PCIe", Vendor: NVIDIA, CC: 900, SMCount: 114, WarpSize: 32, SmemPerBlock: 48 * kib, SmemPerBlockOptin: 227 * kib,
		DP4A: true, Int8MMA: true, FastFP16: true,
		Source: "CC 9.0 per CUDA Programming Guide; 114 SMs per NVIDIA H100 Tensor Core GPU Architecture whitepaper (H100 PCIe)"},
	{Name: "A100", Vendor: NVIDIA, CC: 800, SMCount: 108, WarpSize: 32, SmemPerBlock: 48 * kib, SmemPerBlockOptin: 163 * kib,
		DP4A: true, Int8MMA: true, FastFP16: true,
		Source: "CC 8.0 and 163 KiB opt-in smem per CUDA Programming Guide; 108 SMs per NVIDIA A100 Tensor Core GPU Architecture whitepaper"},
	{Name: "RTX 4090", Vendor: NVIDIA, CC: 890, SMCount: 128, WarpSize: 32, SmemPerBlock: 48 * kib, SmemPerBlockOptin: 99 * kib,
		DP4A: true, Int8MMA: true, FastFP16: true,
		Source: "CC 8.9 and 99 KiB opt-in smem per CUDA Programming Guide; 128 SMs per NVIDIA Ada Lovelace architecture whitepaper (AD102 in RTX 4090)"},
	{Name: "RTX 3090", Vendor: NVIDIA, CC: 860, SMCount: 82, WarpSize: 32, SmemPerBlock: 48 * kib, SmemPerBlockOptin: 99 * kib,
		DP4A: true, Int8MMA: true, FastFP16: true,
		Source: "CC 8.6 and 99 KiB opt-in smem per CUDA Programming Guide; 82 SMs per NVIDIA Ampere GA102 GPU architecture whitepaper (RTX 3090)"},
	{Name: "T4", Vendor: NVIDIA, CC: 750, SMCount: 40, WarpSize: 32, SmemPerBlock: 48 * kib, SmemPerBlockOptin: 64 * kib,
		DP4A: true, Int8MMA: true, FastFP16: true,
		Source: "CC 7.5 and 64 KiB opt-in smem per CUDA Programming Guide; 40 SMs per NVIDIA Turing GPU architecture whitepaper (Tesla T4)"},
	{Name: "V100", Vendor: NVIDIA, CC: 700, SMCount: 80, WarpSize: 32, SmemPerBlock: 48 * kib, SmemPerBlockOptin: 96 * kib,
		DP4A: true, Int8MMA: false, FastFP16: true,
		Source: "CC 7.0 and 96 KiB opt-in smem per CUDA Programming Guide; 80 SMs per NVIDIA Tesla V100 GPU architecture whitepaper (V100 SXM2)"},
	{Name: "P100", Vendor: NVIDIA, CC: 600, SMCount: 56, WarpSize: 32, SmemPerBlock: 48 * kib, SmemPerBlockOptin: 48 * kib,
		DP4A: false, Int8MMA: false, FastFP16: true,
		Source: "CC 6.0 and 48 KiB smem per block per CUDA Programming Guide (no opt-in above 48 KiB); 56 SMs per NVIDIA Tesla P100 whitepaper (GP100 in P100 SXM2/PCIe)"},
	{Name: "P40", Vendor: NVIDIA, CC: 610, SMCount: 30, WarpSize: 32, SmemPerBlock: 48 * kib, SmemPerBlockOptin: 48 * kib,
		DP4A: true, Int8MMA: false, FastFP16: false,
		Source: "CC 6.1 and 48 KiB smem per block per CUDA Programming Guide; 30 SMs (3840 CUDA cores / 128) per NVIDIA Tesla P40 datasheet"},
	{Name: "RTX 5090", Vendor: NVIDIA, CC: 1200, SMCount: 170, WarpSize: 32, SmemPerBlock: 48 * kib, SmemPerBlockOptin: 99 * kib,
		DP4A: true, Int8MMA: true, FastFP16: true,
		Source: "CC 12.0 and 99 KiB opt-in smem per CUDA Programming Guide; 170 SMs (21760 CUDA cores / 128) per NVIDIA GeForce RTX 5090 specifications"},
	{Name: "MI300X", Vendor: AMD, CC: CCOffsetAMD + 0x942, SMCount: 304, WarpSize: 64, SmemPerBlock: 64 * kib, SmemPerBlockOptin: 64 * kib,
		DP4A: true, Int8MMA: true, FastFP16: true,
		Source: "gfx942 (CDNA3) per AMD ROCm GPU hardware specifications; 304 CUs and 64 KiB LDS per AMD Instinct MI300X data sheet; wavefront 64; ggml cc via ggml_cuda_parse_id"},
	{Name: "RX 7900 XTX", Vendor: AMD, CC: CCOffsetAMD + 0x1100, SMCount: 96, WarpSize: 32, SmemPerBlock: 64 * kib, SmemPerBlockOptin: 64 * kib,
		DP4A: true, Int8MMA: true, FastFP16: true,
		Source: "gfx1100 (RDNA3) per AMD ROCm GPU hardware specifications; 96 CUs per AMD Radeon RX 7900 XTX specifications; 64 KiB LDS per workgroup; HIP reports warpSize 32 (wave32); ggml cc via ggml_cuda_parse_id"},
}

// Catalog returns a copy of the built-in devices.
func Catalog() []Device {
	out := make([]Device, len(catalog))
	copy(out, catalog)
	return out
}

// normName folds case and drops spaces, '-' and '_' so that "rtx4090", "RTX 4090" and
// "rtx-4090" match.
func normName(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if r == ' ' || r == '-' || r == '_' {
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Lookup returns the catalog device whose name matches name (case, spaces, '-' and '_'
// ignored; "H100" also finds "H100 SXM"). The error lists the known names.
func Lookup(name string) (Device, error) {
	n := normName(name)
	for _, d := range catalog {
		if normName(d.Name) == n {
			return d, nil
		}
	}
	if n == "h100" {
		return Lookup("H100 SXM")
	}
	names := make([]string, len(catalog))
	for i, d := range catalog {
		names[i] = d.Name
	}
	return Device{}, fmt.Errorf("sim: unknown device %q (known: %s)", name, strings.Join(names, ", "))
}

// Validate reports what is wrong with d, or nil: every problem found, joined.
func (d *Device) Validate() error {
	var errs []error
	bad := func(format string, a ...any) {
		errs = append(errs, fmt.Errorf("sim: device %q: "+format, append([]any{d.Name}, a...)...))
	}
	if d.Name == "" {
		bad("empty Name")
	}
	switch d.Vendor {
	case NVIDIA:
		if d.CC < 300 || d.CC >= CCOffsetMThrds || d.CC%10 != 0 {
			bad("NVIDIA CC %d is not 100*major+10*minor for a CUDA device (e.g. 900 for 9.0)", d.CC)
		}
		if d.WarpSize != 32 {
			bad("NVIDIA WarpSize %d, want 32", d.WarpSize)
		}
	case AMD:
		if !CCIsAMD(d.CC) || d.CC&0xff00 == 0 {
			bad("AMD CC %#x is not CCOffsetAMD (0x1000000) + gfx id (e.g. 0x1000942 for gfx942)", d.CC)
		}
		if d.WarpSize != 32 && d.WarpSize != 64 {
			bad("AMD WarpSize %d, want 32 or 64", d.WarpSize)
		}
		if CCIsAMD(d.CC) && (CCIsGCN(d.CC) || CCIsCDNA(d.CC)) && d.WarpSize != 64 {
			bad("GCN/CDNA devices have WarpSize 64, not %d", d.WarpSize)
		}
	case MThreads:
		if !CCIsMThreads(d.CC) {
			bad("Moore Threads CC %#x is not CCOffsetMThrds (0x100000) + 0x100*major + 0x10*minor", d.CC)
		}
		if d.WarpSize != 32 {
			bad("Moore Threads WarpSize %d, want 32", d.WarpSize)
		}
	default:
		bad("Vendor %q, want %q, %q or %q", d.Vendor, NVIDIA, AMD, MThreads)
	}
	if d.SMCount <= 0 || d.SMCount > 4096 {
		bad("SMCount %d outside [1, 4096]", d.SMCount)
	}
	if d.SmemPerBlock <= 0 || d.SmemPerBlock > 1<<20 {
		bad("SmemPerBlock %d bytes outside [1, 1 MiB]", d.SmemPerBlock)
	}
	if d.SmemPerBlockOptin < d.SmemPerBlock || d.SmemPerBlockOptin > 1<<20 {
		bad("SmemPerBlockOptin %d bytes outside [SmemPerBlock=%d, 1 MiB]", d.SmemPerBlockOptin, d.SmemPerBlock)
	}
	for _, a := range d.ArchList {
		if a <= 0 || a >= CCOffsetMThrds || a%10 != 0 {
			bad("ArchList entry %d is not a CUDA arch like 750 or 900", a)
		}
	}
	hc := d.HighestCompiledArch()
	if len(d.ArchList) > 0 && hc < 0 {
		bad("ArchList %v has no arch <= CC %d: ggml would have no device code", d.ArchList, d.CC)
	}
	if want := HasDP4A(d.CC); d.DP4A != want {
		bad("DP4A is %v but CC %#x implies %v", d.DP4A, d.CC, want)
	}
	if d.NoTuringMMA && d.Vendor != NVIDIA {
		bad("NoTuringMMA is set on a %s device: it describes an NVIDIA build only", d.Vendor)
	}
	if want := d.HasInt8MMA(); d.Int8MMA != want {
		bad("Int8MMA is %v but CC %#x (highest compiled arch %d) implies %v", d.Int8MMA, d.CC, hc, want)
	}
	if want := FastFP16Available(d.CC, hc); d.FastFP16 != want {
		bad("FastFP16 is %v but CC %#x (highest compiled arch %d) implies %v", d.FastFP16, d.CC, hc, want)
	}
	if strings.TrimSpace(d.Source) == "" {
		bad("empty Source (say where the figures come from)")
	}
	return errors.Join(errs...)
}

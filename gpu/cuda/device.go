package cuda

import "fmt"

// Options choose the libraries and the device. The zero value is the default.
type Options struct {
	// Device is the CUDA device ordinal (0 = the first visible device).
	Device int
	// DriverLib overrides the driver library; default "libcuda.so.1" then "libcuda.so".
	DriverLib string
	// NVRTCLib overrides the NVRTC library; default: $GGSIM_NVRTC, then libnvrtc.so,
	// libnvrtc.so.13, libnvrtc.so.12, then those names under $CUDA_HOME/lib64,
	// $CUDA_PATH/lib64 and /usr/local/cuda/lib64 (NVRTCCandidates lists them).
	NVRTCLib string
	// NoNVRTC opens the driver only (DeviceInfo works, Compile does not).
	NoNVRTC bool
}

// DeviceInfo describes the device a Context runs on.
type DeviceInfo struct {
	Ordinal  int
	Name     string // cuDeviceGetName, e.g. "NVIDIA H200"
	Major    int    // compute capability major
	Minor    int    // compute capability minor
	SMCount  int    // CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT
	WarpSize int    // CU_DEVICE_ATTRIBUTE_WARP_SIZE
	TotalMem uint64 // bytes, cuDeviceTotalMem_v2

	// SmemPerBlock and SmemPerBlockOptin are the shared memory a block may use without
	// and with opting in, in bytes (ggml's smpb and smpbo: sharedMemPerBlock and
	// sharedMemPerBlockOptin; CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK[_OPTIN]).
	SmemPerBlock      int
	SmemPerBlockOptin int

	// DriverAPI is cuDriverGetVersion: 1000*major + 10*minor of the CUDA version the
	// driver supports, e.g. 13000.
	DriverAPI int
	// Driver is the kernel driver's version string, e.g. "580.159.04", from NVML
	// (nvmlSystemGetDriverVersion) or /proc/driver/nvidia/version; "" if neither answers.
	Driver string

	// NVRTC is NVRTC's version (major, minor) and the library that was loaded; zero
	// and "" when NVRTC was not opened.
	NVRTC     [2]int
	NVRTCPath string
}

// CC returns the compute capability as ggml writes it: 100*major + 10*minor (900 for 9.0).
func (d DeviceInfo) CC() int { return 100*d.Major + 10*d.Minor }

// Arch returns the NVRTC architecture option for the device, e.g. "sm_90".
func (d DeviceInfo) Arch() string { return fmt.Sprintf("sm_%d%d", d.Major, d.Minor) }

// String is a one-line description.
func (d DeviceInfo) String() string {
	s := fmt.Sprintf("%s (device %d, cc %d.%d, %d SMs, warp %d, smpb %d, smpbo %d, %.1f GiB; driver %s, CUDA driver API %d.%d",
		d.Name, d.Ordinal, d.Major, d.Minor, d.SMCount, d.WarpSize, d.SmemPerBlock, d.SmemPerBlockOptin, float64(d.TotalMem)/(1<<30),
		orUnknown(d.Driver), d.DriverAPI/1000, (d.DriverAPI%1000)/10)
	if d.NVRTCPath != "" {
		s += fmt.Sprintf("; NVRTC %d.%d from %s", d.NVRTC[0], d.NVRTC[1], d.NVRTCPath)
	}
	return s + ")"
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// Program is the output of NVRTC for one source.
type Program struct {
	Name    string
	Arch    string   // e.g. "sm_90"
	Options []string // every option passed to NVRTC
	Cubin   []byte   // machine code for Arch
	PTX     string   // the PTX of the same source and options
	Log     string   // NVRTC's log (warnings), often empty
}

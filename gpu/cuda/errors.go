package cuda

import (
	"errors"
	"fmt"

	"github.com/ggsim/ggsim/gpu/internal/dl"
)

// ErrNotBuilt is returned by every entry point of a build without the cuda tag
// ("ggsim built without the cuda tag").
var ErrNotBuilt = dl.ErrNotBuilt

// Sentinel causes; a *DriverError matches them with errors.Is.
var (
	// ErrNoDriver: libcuda.so.1 could not be loaded, or cuInit reports no driver.
	ErrNoDriver = errors.New("cuda: no CUDA driver")
	// ErrNoDevice: the driver reports no CUDA-capable device, or the ordinal is out of range.
	ErrNoDevice = errors.New("cuda: no CUDA device")
	// ErrOutOfMemory: a device allocation failed for lack of memory.
	ErrOutOfMemory = errors.New("cuda: out of device memory")
	// ErrNoNVRTC: no NVRTC library could be loaded.
	ErrNoNVRTC = errors.New("cuda: no NVRTC library")
)

// CUresult codes ggsim gives a meaning to (cuda.h, stable since CUDA 2).
const (
	cudaSuccess           = 0
	cudaErrOutOfMemory    = 2
	cudaErrNoDevice       = 100
	cudaErrInvalidDevice  = 101
	cudaErrNoBinaryForGPU = 209
	cudaErrNoDriverLoaded = 35 // CUDA_ERROR_INSUFFICIENT_DRIVER
	cudaErrStubLibrary    = 34
)

// DriverError is a failed CUDA driver API call.
type DriverError struct {
	Call string // the entry point, e.g. "cuMemAlloc_v2"
	Code int    // the CUresult
	Name string // from cuGetErrorName, e.g. "CUDA_ERROR_OUT_OF_MEMORY"
	Desc string // from cuGetErrorString
}

func (e *DriverError) Error() string {
	name := e.Name
	if name == "" {
		name = "unknown CUresult"
	}
	if e.Desc != "" {
		return fmt.Sprintf("cuda: %s: %s (%d): %s", e.Call, name, e.Code, e.Desc)
	}
	return fmt.Sprintf("cuda: %s: %s (%d)", e.Call, name, e.Code)
}

// Is matches ErrOutOfMemory, ErrNoDevice and ErrNoDriver by code.
func (e *DriverError) Is(target error) bool {
	switch target {
	case ErrOutOfMemory:
		return e.Code == cudaErrOutOfMemory
	case ErrNoDevice:
		return e.Code == cudaErrNoDevice || e.Code == cudaErrInvalidDevice
	case ErrNoDriver:
		return e.Code == cudaErrNoDriverLoaded || e.Code == cudaErrStubLibrary
	}
	return false
}

// NVRTCError is a failed NVRTC call; for a failed compilation Log holds the compiler's log.
type NVRTCError struct {
	Call string // e.g. "nvrtcCompileProgram"
	Code int    // the nvrtcResult
	Name string // from nvrtcGetErrorString, e.g. "NVRTC_ERROR_COMPILATION"
	Unit string // the source's name
	Log  string
}

func (e *NVRTCError) Error() string {
	s := fmt.Sprintf("cuda: %s(%s): %s (%d)", e.Call, e.Unit, e.Name, e.Code)
	if e.Log != "" {
		s += ":\n" + e.Log
	}
	return s
}

package sim

import (
	"fmt"
	"strings"
)

// Counter names one kind of instruction a simulated kernel executes.
type Counter int

// The counted instruction kinds: Op + the SASS name where one exists.
const (
	OpFFMA      Counter = iota // float32 fused multiply-add
	OpFMUL                     // float32 multiply
	OpFADD                     // float32 add/sub
	OpFMNMX                    // float32 min/max
	OpMUFU                     // special-function unit (RCP, EX2, ...)
	OpHFMA2                    // half2 fma
	OpHMUL2                    // half2 multiply
	OpHADD2                    // half2 add
	OpDP4A                     // IDP.4A byte dot product
	OpIMMA                     // int8 tensor-core mma (one mma.sync instruction)
	OpHMMA                     // f16/bf16 tensor-core mma
	OpI2F                      // int -> float conversion
	OpF2I                      // float -> int conversion
	OpF2H                      // float -> half conversion
	OpH2F                      // half -> float conversion
	OpIOP                      // other integer ops (prmt, lop3, vsub, popc, ...)
	OpSHFL                     // warp shuffle
	OpLDS                      // shared-memory load (one per 32-bit word per thread)
	OpSTS                      // shared-memory store
	OpLDG                      // global-memory load
	OpSTG                      // global-memory store
	OpBAR                      // __syncthreads
	NumCounters                // number of counter kinds
)

var counterNames = [NumCounters]string{
	"FFMA", "FMUL", "FADD", "FMNMX", "MUFU", "HFMA2", "HMUL2", "HADD2", "DP4A", "IMMA", "HMMA",
	"I2F", "F2I", "F2H", "H2F", "IOP", "SHFL", "LDS", "STS", "LDG", "STG", "BAR",
}

// String returns the counter's name (e.g. "FFMA").
func (k Counter) String() string {
	if k < 0 || k >= NumCounters {
		return fmt.Sprintf("Counter(%d)", int(k))
	}
	return counterNames[k]
}

// Counters counts the instructions a simulated kernel executes, per kind. A nil
// *Counters is valid and counts nothing, so a kernel's fast path passes nil and pays one
// predictable branch per Inc.
type Counters struct {
	N [NumCounters]int64
}

// Inc adds n to counter k. It does nothing on a nil receiver.
func (c *Counters) Inc(k Counter, n int) {
	if c != nil {
		c.N[k] += int64(n)
	}
}

// Get returns counter k (0 on a nil receiver).
func (c *Counters) Get(k Counter) int64 {
	if c == nil {
		return 0
	}
	return c.N[k]
}

// Add adds every counter of o to c. It does nothing if c is nil; a nil o adds nothing.
func (c *Counters) Add(o *Counters) {
	if c == nil || o == nil {
		return
	}
	for k := range c.N {
		c.N[k] += o.N[k]
	}
}

// Reset sets every counter to zero.
func (c *Counters) Reset() {
	if c != nil {
		*c = Counters{}
	}
}

// String lists the nonzero counters as "FFMA=12 FADD=3", in Counter order.
func (c *Counters) String() string {
	if c == nil {
		return "<nil>"
	}
	var b strings.Builder
	for k, n := range c.N {
		if n == 0 {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%s=%d", Counter(k), n)
	}
	return b.String()
}

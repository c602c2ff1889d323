package fp16path

import (
	"fmt"
	"math"
)

// Cache is the note's activation-conversion cache for one graph evaluation: the matmuls
// (and fused gate/up pairs) that share a src1 convert it once; RMSNormMul with the norm
// fusion writes its output's conversion into it directly. Conversion is a pure function
// of the column (ConvertActivations), so the cache never changes a bit, only how often
// the conversion runs (Conversions, Hits).
//
// An entry is found by the identity of the src1 slice (its first element's address and
// its length, as the patch would key on the src1 tensor) and used only if the values are
// still the same bits (a copy is kept and compared): a buffer that a graph allocator
// reused for another tensor converts again instead of returning stale halves. Reset
// starts a new graph evaluation. The zero value is an empty cache; a nil *Cache caches
// nothing. A Cache is not safe for concurrent use.
type Cache struct {
	entries     map[cacheKey]*cacheEntry
	conversions int
	hits        int
}

type cacheKey struct {
	p *float32
	n int
}

type cacheEntry struct {
	y    []float32 // a copy of src1
	acts []*Activations
}

// Reset empties the cache (a new graph evaluation) and zeroes its counters.
func (c *Cache) Reset() { *c = Cache{} }

// Conversions returns how many columns the cache converted (or, for RMSNormMul's fusion,
// received already converted) since the last Reset.
func (c *Cache) Conversions() int {
	if c == nil {
		return 0
	}
	return c.conversions
}

// Hits returns how many columns the cache served without converting.
func (c *Cache) Hits() int {
	if c == nil {
		return 0
	}
	return c.hits
}

// Columns returns the conversions of the M columns of y (len(y) = K·M, column j =
// y[j*K:(j+1)*K]) through the cache, as the path's matmuls take them.
func (c *Cache) Columns(y []float32, K, M int, opt *Options) ([]*Activations, error) {
	if K <= 0 || M <= 0 || len(y) != K*M {
		return nil, fmt.Errorf("fp16path: %d activations for %d column(s) of %d", len(y), M, K)
	}
	return c.columns(y, K, M, opt)
}

func (c *Cache) columns(y []float32, K, M int, opt *Options) ([]*Activations, error) {
	use := c != nil && (opt == nil || !opt.NoActCache)
	key := cacheKey{&y[0], len(y)}
	if use {
		if e, ok := c.entries[key]; ok && sameBits(e.y, y) && len(e.acts) == M {
			c.hits += M
			return e.acts, nil
		}
	}
	acts := make([]*Activations, M)
	for j := range acts {
		a, err := ConvertActivations(y[j*K : (j+1)*K])
		if err != nil {
			if M > 1 {
				return nil, fmt.Errorf("column %d: %w", j, err)
			}
			return nil, err
		}
		acts[j] = a
	}
	if use {
		c.put(key, y, acts)
	}
	if c != nil {
		c.conversions += M
	}
	return acts, nil
}

func (c *Cache) put(key cacheKey, y []float32, acts []*Activations) {
	if c.entries == nil {
		c.entries = map[cacheKey]*cacheEntry{}
	}
	c.entries[key] = &cacheEntry{y: append([]float32(nil), y...), acts: acts}
}

func sameBits(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return false
		}
	}
	return true
}

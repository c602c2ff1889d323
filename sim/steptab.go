package sim

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"sync"
)

// stepTable is a monotone table of float32 bit patterns stored as 2-bit steps, the form
// the measured MUFU.EX2 tables are embedded in: value[0] is given, and value[k] =
// value[k-1] + dir*step[k] with step[k] in {0, 1, 2, 3}. Lookups cost one popcount pair
// per 32 entries: base[w] holds value[32w], word[w] the 32 steps that follow it.
type stepTable struct {
	name string
	raw  string // embedded: 4-byte little-endian value[0], then the packed steps
	n    int    // entries
	dir  int32  // +1 increasing, -1 decreasing

	once sync.Once
	err  error
	word []uint64 // steps k = 32w+1 .. 32w+32 in bits 2j, 2j+1 (j = 0..31)
	base []uint32 // value[32w]
}

// EncodeStepTable packs a monotone table of float32 bit patterns in the form package sim
// embeds its measured MUFU tables in (dir +1 increasing, -1 decreasing); it fails if a step is
// outside {0..3} in the table's direction.
func EncodeStepTable(v []uint32, dir int32) ([]byte, error) {
	out := make([]byte, 4, 4+(len(v)+3)/4)
	binary.LittleEndian.PutUint32(out, v[0])
	packed := make([]byte, (len(v)-1+3)/4)
	for k := 1; k < len(v); k++ {
		d := (int64(v[k]) - int64(v[k-1])) * int64(dir)
		if d < 0 || d > 3 {
			return nil, fmt.Errorf("sim: step %d of %#08x -> %#08x is not in 0..3", k, v[k-1], v[k])
		}
		packed[(k-1)/4] |= byte(d) << (2 * ((k - 1) % 4))
	}
	return append(out, packed...), nil
}

func (t *stepTable) load() error {
	t.once.Do(func() {
		if len(t.raw) != 4+(t.n-1+3)/4 {
			t.err = fmt.Errorf("sim: table %s has %d bytes, want %d", t.name, len(t.raw), 4+(t.n-1+3)/4)
			return
		}
		nw := (t.n + 31) / 32
		t.word = make([]uint64, nw)
		t.base = make([]uint32, nw)
		v := int64(binary.LittleEndian.Uint32([]byte(t.raw[:4])))
		for w := 0; w < nw; w++ {
			t.base[w] = uint32(v)
			var word uint64
			for j := 0; j < 32; j++ {
				k := 32*w + j + 1 // step k leads from value[k-1] to value[k]
				if k >= t.n {
					break
				}
				s := uint64(t.raw[4+(k-1)/4]>>(2*((k-1)%4))) & 3
				word |= s << (2 * j)
				v += int64(t.dir) * int64(s)
			}
			t.word[w] = word
		}
	})
	return t.err
}

// at returns value[k]; the table must be loaded.
func (t *stepTable) at(k uint32) uint32 {
	w, j := k>>5, k&31
	m := uint64(1)<<(2*j) - 1 // the first j steps after base[w]
	if j == 0 {
		m = 0
	}
	s := t.word[w] & m
	sum := uint32(bits.OnesCount64(s&0x5555555555555555) + 2*bits.OnesCount64(s&0xaaaaaaaaaaaaaaaa))
	if t.dir > 0 {
		return t.base[w] + sum
	}
	return t.base[w] - sum
}

package quant

import (
	"bytes"
	"encoding/binary"
	"math"
	"testing"
)

// kqFuzzSeeds are the seed corpus shared by the fuzz targets: empty, all-zero, all-ones
// and patterned blocks, half NaN/Inf scales, and float32 rows with specials.
func kqFuzzSeeds(f *testing.F) {
	f.Add([]byte{})
	for ti := range kqTypes {
		bs := kqTypes[ti].TypeSize()
		f.Add(append([]byte{byte(ti)}, make([]byte, bs)...))
		f.Add(append([]byte{byte(ti)}, bytes.Repeat([]byte{0xff}, 2*bs)...))
		p := make([]byte, 1+bs)
		p[0] = byte(ti)
		for i := 1; i < len(p); i++ {
			p[i] = byte(i*131 + 7)
		}
		f.Add(p)
		// half scales NaN (0x7e00) and Inf (0x7c00) wherever the type keeps them
		q := append([]byte{byte(ti)}, bytes.Repeat([]byte{0x00, 0x7e, 0x00, 0x7c}, bs/4+1)[:bs]...)
		f.Add(q)
	}
	row := make([]byte, 1+4*QK_K)
	for i := 0; i < QK_K; i++ {
		v := float32(math.Sin(float64(i))) * 3
		switch i {
		case 17:
			v = float32(math.NaN())
		case 99:
			v = float32(math.Inf(-1))
		case 200:
			v = math.Float32frombits(1)
		}
		binary.LittleEndian.PutUint32(row[1+4*i:], math.Float32bits(v))
	}
	f.Add(row)
}

// FuzzKQuantDequantize: any bytes are blocks of some K-quant type; dequantization must
// not panic and must equal the per-value formula bit for bit.
func FuzzKQuantDequantize(f *testing.F) {
	kqFuzzSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 1 {
			return
		}
		typ := kqTypes[int(data[0])%len(kqTypes)]
		bs := typ.TypeSize()
		nb := min((len(data)-1)/bs, 8)
		if nb == 0 {
			return
		}
		kqCheckFormula(t, typ, data[1:1+nb*bs])
	})
}

// FuzzKQuantQuantize: any bytes are float32 inputs (padded with zeros to whole blocks);
// quantizing must not panic, must write every byte of the destination (the result does
// not depend on what the destination held) and must decode consistently.
func FuzzKQuantQuantize(f *testing.F) {
	kqFuzzSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 1 {
			return
		}
		typ := kqTypes[int(data[0])%len(kqTypes)]
		vals := (len(data) - 1) / 4
		nb := min((vals+QK_K-1)/QK_K, 4)
		if nb == 0 {
			nb = 1
		}
		x := make([]float32, nb*QK_K)
		for i := 0; i < len(x) && 4*i+5 <= len(data); i++ {
			x[i] = math.Float32frombits(binary.LittleEndian.Uint32(data[1+4*i:]))
		}
		q0 := make([]byte, nb*typ.TypeSize())
		q1 := bytes.Repeat([]byte{0xa5}, len(q0))
		if err := QuantizeRowRef(typ, x, q0); err != nil {
			t.Fatal(err)
		}
		if err := QuantizeRowRef(typ, x, q1); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(q0, q1) {
			t.Fatalf("%v: the quantized bytes depend on the destination's previous contents", typ)
		}
		kqCheckFormula(t, typ, q0)
	})
}

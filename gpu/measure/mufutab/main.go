// Command mufutab converts the MUFU.EX2 tables measured by gpu/measure/mufu_probe.cu into
// the step tables package sim embeds:
//
//	go run ./gpu/measure/mufutab -t24 OUT/ex2_t24.u8 -tn24 OUT/ex2_tn24.u8 \
//	    -tanh-in OUT/tanh_rle_in.u32 -tanh-out OUT/tanh_rle_out.u32 -o sim
//
// It checks that both measured grids of 2^24 points (x = ±j·2^-24) have equal values at
// j = 2k and 2k+1 (23 fraction bits: the model sim.Ex2 documents) and writes the 2^23
// values at j = 2k as sim/mufu_ex2p_sm90.bin and sim/mufu_ex2n_sm90.bin; and it turns the
// run-length record of tanh.approx into sim/mufu_tanh_sm90.bin.
package main

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"

	"github.com/ggsim/ggsim/sim"
)

// readGrid decodes mufu_probe's byte-delta form: 4 bytes of value[0], then one byte per
// j >= 1 holding dir*(value[j]-value[j-1]); 255 marks an escape, which this command
// refuses (the probe lists escapes in its log; none occurred on the H200).
func readGrid(path string, dir int64) ([]uint32, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if len(b) != 4+(1<<24)-1 {
		return nil, fmt.Errorf("%s: %d bytes, want %d", path, len(b), 4+(1<<24)-1)
	}
	v := make([]uint32, 1<<24)
	v[0] = binary.LittleEndian.Uint32(b)
	for j := 1; j < len(v); j++ {
		d := b[4+j-1]
		if d == 255 {
			return nil, fmt.Errorf("%s: escape at j=%d", path, j)
		}
		v[j] = uint32(int64(v[j-1]) + dir*int64(d))
	}
	return v, nil
}

func halve(name string, v []uint32) ([]uint32, error) {
	out := make([]uint32, len(v)/2)
	for k := range out {
		if v[2*k] != v[2*k+1] {
			return nil, fmt.Errorf("%s: value at j=%d (%#08x) differs from j=%d (%#08x): the input has more than 23 fraction bits", name, 2*k, v[2*k], 2*k+1, v[2*k+1])
		}
		out[k] = v[2*k]
	}
	return out, nil
}

func main() {
	t24 := flag.String("t24", "", "ex2_t24.u8 from mufu_probe")
	tn24 := flag.String("tn24", "", "ex2_tn24.u8 from mufu_probe")
	tin := flag.String("tanh-in", "", "tanh_rle_in.u32 from mufu_probe")
	tout := flag.String("tanh-out", "", "tanh_rle_out.u32 from mufu_probe")
	rsq := flag.String("rsq", "", "rsq_14.i8 from mufu_probe (optional)")
	dir := flag.String("o", "sim", "directory to write the tables to")
	flag.Parse()
	if *t24 == "" || *tn24 == "" || *tin == "" || *tout == "" || flag.NArg() != 0 {
		fmt.Fprintln(os.Stderr, "usage: mufutab -t24 FILE -tn24 FILE -tanh-in FILE -tanh-out FILE [-o DIR]")
		os.Exit(2)
	}
	for _, job := range []struct {
		in, out string
		dir     int64
	}{{*t24, "mufu_ex2p_sm90.bin", +1}, {*tn24, "mufu_ex2n_sm90.bin", -1}} {
		v, err := readGrid(job.in, job.dir)
		if err == nil {
			v, err = halve(job.in, v)
		}
		var b []byte
		if err == nil {
			b, err = sim.EncodeStepTable(v, int32(job.dir))
		}
		if err == nil {
			err = os.WriteFile(filepath.Join(*dir, job.out), b, 0o644)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "mufutab:", err)
			os.Exit(1)
		}
		fmt.Printf("%s: %d values, %#08x .. %#08x, %d bytes\n", job.out, len(v), v[0], v[len(v)-1], len(b))
	}
	b, err := tanhTable(*tin, *tout)
	if err == nil {
		err = os.WriteFile(filepath.Join(*dir, "mufu_tanh_sm90.bin"), b, 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "mufutab:", err)
		os.Exit(1)
	}
	fmt.Printf("mufu_tanh_sm90.bin: %d bytes\n", len(b))
	if *rsq != "" {
		b, err := rsqTable(*rsq)
		if err == nil {
			err = os.WriteFile(filepath.Join(*dir, "mufu_rsq_sm90.bin"), b, 0o644)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "mufutab:", err)
			os.Exit(1)
		}
		fmt.Printf("mufu_rsq_sm90.bin: %d bytes\n", len(b))
	}
}

// rsqTable turns mufu_probe's record of rsqrt.approx.ftz.f32 on [1, 4) (one int8 per input
// x = bits 0x3f800000+j: hardware bits minus the bits of float32(1/sqrt(float64(x))), -128
// an escape) into sim's decreasing step table of the 2^24 results.
func rsqTable(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if len(b) != 1<<24 {
		return nil, fmt.Errorf("%s: %d bytes, want %d", path, len(b), 1<<24)
	}
	v := make([]uint32, 1<<24)
	for j := range v {
		d := int8(b[j])
		if d == -128 {
			return nil, fmt.Errorf("%s: escape at j=%d", path, j)
		}
		x := math.Float32frombits(0x3f800000 + uint32(j))
		ref := math.Float32bits(float32(1 / math.Sqrt(float64(x))))
		v[j] = uint32(int64(ref) + int64(d))
	}
	return sim.EncodeStepTable(v, -1)
}

// tanhTable converts mufu_probe's run-length record of tanh.approx on [2^-8, 8] (two
// files of delta-coded columns: the input bits where the output changes and the new
// output bits) into sim's table (sim/mufu_tanh.go documents the format). For each input
// exponent it takes as the group size the largest power of two every change point is
// aligned to, and it checks that the table reproduces every run of the record.
func tanhTable(inPath, outPath string) ([]byte, error) {
	rd := func(p string) ([]uint32, error) {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		if len(b)%4 != 0 {
			return nil, fmt.Errorf("%s: %d bytes, not a multiple of 4", p, len(b))
		}
		v := make([]uint32, len(b)/4)
		var acc uint32
		for i := range v {
			acc += binary.LittleEndian.Uint32(b[4*i:])
			v[i] = acc
		}
		return v, nil
	}
	in, err := rd(inPath)
	if err != nil {
		return nil, err
	}
	out, err := rd(outPath)
	if err != nil {
		return nil, err
	}
	if len(in) != len(out) || len(in) == 0 || in[0] != 0x3b800000 || in[len(in)-1] != 0x41000000 {
		return nil, fmt.Errorf("tanh record: %d and %d pairs, first input %#08x, last %#08x: want equal counts from 0x3b800000 to 0x41000000", len(in), len(out), in[0], in[len(in)-1])
	}
	const lo, hi = 119, 129
	var shift [hi - lo + 1]uint
	for e := range shift {
		shift[e] = 23
	}
	for _, x := range in[:len(in)-1] {
		e := x>>23 - lo
		tz := uint(0)
		for m := x & 0x7fffff; m&1 == 0 && tz < 23; m >>= 1 {
			tz++
		}
		shift[e] = min(shift[e], tz)
	}
	hdr := append([]byte("TANH1"), make([]byte, len(shift))...)
	var body []byte
	var prev int64
	k := 0 // the run holding the current group
	for e := lo; e <= hi; e++ {
		s := shift[e-lo]
		hdr[5+e-lo] = byte(s)
		for g := uint32(0); g < 1<<(23-s); g++ {
			x := uint32(e)<<23 | g<<s
			for k+1 < len(in) && in[k+1] <= x {
				k++
			}
			// every input of the group lies in run k: the next change point is beyond it
			if k+1 < len(in) && in[k+1] < x+1<<s {
				return nil, fmt.Errorf("tanh record: the output changes inside the group at %#08x", x)
			}
			v := int64(out[k])
			body = binary.AppendVarint(body, v-prev)
			prev = v
		}
	}
	var z bytes.Buffer
	w, _ := flate.NewWriter(&z, flate.BestCompression)
	if _, err := w.Write(body); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return append(hdr, z.Bytes()...), nil
}

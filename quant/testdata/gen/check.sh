#!/usr/bin/env bash
# check.sh GGML BUILD: rebuilds every committed quant test vector and digest that comes
# from ggml's C code, with the programs in this folder, and compares them with the
# committed ones. GGML is a ggml checkout at d99724f2b141, BUILD its CPU-only cmake build
# folder (README.md here says how to make it). Run from the repository root. Prints one
# line per check and exits non-zero if any differs.
set -euo pipefail
GGML=${1:?usage: check.sh GGML BUILD}
BUILD=${2:?usage: check.sh GGML BUILD}
LIB=$BUILD/src
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
G=quant/testdata/gen
fail=0
CC=${CC:-cc}
CXX=${CXX:-c++}

"$CC" -O2 -std=c11 -ffp-contract=off -I"$GGML/include" $G/genvectors.c -L"$LIB" -lggml-base -lm -Wl,-rpath,"$LIB" -o "$W/genvectors"
"$CC" -O2 -std=c11 -ffp-contract=off -I"$GGML/include" $G/ggmlrows.c -L"$LIB" -lggml-base -lm -Wl,-rpath,"$LIB" -o "$W/ggmlrows"
"$CC" -O2 -I"$GGML/include" -I"$GGML/src" -x c $G/gridtables.c -o "$W/gt_c"
"$CXX" -O2 -I"$GGML/include" -I"$GGML/src" -x c++ $G/gridtables.c -o "$W/gt_cpp"

# 1. quant/testdata/vectors/*.bin, byte for byte.
mkdir "$W/vectors"
"$W/genvectors" "$W/vectors" > /dev/null
for f in quant/testdata/vectors/*.bin; do
    if cmp -s "$f" "$W/vectors/$(basename "$f")"; then echo "same   $f"; else echo "DIFFER $f"; fail=1; fi
done

# digest NAME FILE GOFILE: the SHA-256 of FILE must appear in GOFILE.
digest() {
    local h
    h=$(sha256sum "$2" | cut -d' ' -f1)
    if grep -q "$h" "$3"; then echo "same   $1 ($3)"; else echo "DIFFER $1: $h not in $3"; fail=1; fi
}

# 2. the grid tables (TestGridTablesSHA256).
mkdir "$W/grids"
"$W/gt_c" "$W/grids"
"$W/gt_cpp" "$W/grids"
for f in "$W"/grids/*.bin; do digest "$(basename "$f" .bin)" "$f" quant/grids_test.go; done

# 3. the digests over inputs the Go tests make (TestKQuantSweep, TestQuantizeRefCSpot,
# TestDequantizeCSpot): the tests write the inputs, ggmlrows runs ggml on them.
GGSIM_QUANT_C_INPUTS="$W/in" go test -count=1 -run '^TestWriteCInputs$' ./quant > /dev/null
for f in "$W"/in/sweep-*.f32; do
    t=$(basename "$f" .f32); t=${t#sweep-}
    "$W/ggmlrows" ggqv "$t" 512 "$f" "$W/sweep-$t"
    digest "sweep $t" "$W/sweep-$t" quant/kquants_sweep_test.go
done
for f in "$W"/in/cspot-*.f32; do
    t=$(basename "$f" .f32); t=${t#cspot-}
    "$W/ggmlrows" quantize "$t" $(( $(stat -c%s "$f") / 4 )) "$f" "$W/cspot-$t"
    digest "quantize spot $t" "$W/cspot-$t" quant/extra_test.go
done
declare -A geom=([iq1_m]=256:56 [iq1_s]=256:50 [iq2_s]=256:82 [iq2_xs]=256:74 [iq2_xxs]=256:66 [iq3_s]=256:110
                 [iq3_xxs]=256:98 [nvfp4]=64:36 [q1_0]=128:18 [q2_0]=64:18 [tq1_0]=256:54 [tq2_0]=256:66)
for f in "$W"/in/dspot-*.raw; do
    t=$(basename "$f" .raw); t=${t#dspot-}
    bs=${geom[$t]%:*}; ts=${geom[$t]#*:}
    "$W/ggmlrows" dequantize "$t" $(( $(stat -c%s "$f") / ts * bs )) "$f" "$W/dspot-$t"
    digest "dequantize spot $t" "$W/dspot-$t" quant/iquants_test.go
done
exit $fail

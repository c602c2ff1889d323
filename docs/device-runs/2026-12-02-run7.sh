#!/bin/bash
# ggsim device run 7 of 2026-12-02 (fourth session): the front door's fuzz targets
# (FuzzMulMat, FuzzMulMatID) on the SIMD build, whose MMVQ kernels are new (thread lanes,
# Q4_K with 16 lanes on this AVX-512 host): 8 workers each on the host's 16 vCPUs, GPU
# unused. Each input runs twice, with 3 workers, under GOMAXPROCS 1 and 2, and lane by lane
# (the traced MMVQ launch against the fast one). Carried: .carry/fuzz, made by
#   mkdir -p .carry/fuzz && GOEXPERIMENT=simd go test -c \
#     -gcflags="github.com/ggsim/ggsim/...=-d=libfuzzer" -ldflags='-s -w' -o /tmp/fz/ggsim.test . &&
#   (cd /tmp/fz && tar -cf - ./ggsim.test) | xz -9e > .carry/fuzz/bins.tar.xz &&
#   echo "ggsim:.:FuzzMulMat,FuzzMulMatID" > .carry/fuzz/targets.txt && cp .ci/fuzz-device .carry/fuzz/fuzz-device.sh
# Usage (repo root on the device): OUT=... FZ=seconds bash docs/device-runs/2026-12-02-run7.sh
set -o pipefail
{ date -u; grep -m1 '^flags' /proc/cpuinfo | tr ' ' '\n' | grep -E '^(avx2|fma|avx512f|avx512bw)$' | tr '\n' ' '; echo; } > $OUT/env.txt 2>&1
bash .carry/fuzz/fuzz-device.sh ${FZ:-420}s 8 > $OUT/fuzz.log 2>&1
echo "rc=$?" >> $OUT/fuzz.log

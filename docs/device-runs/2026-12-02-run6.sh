#!/bin/bash
# ggsim device run 6 of 2026-12-02 (fourth session): ggml d99724f2b141 built for CUDA sm_90
# (as shipped: int8 MMA), then the conformance suite on the H200 with the simulator as the
# reference, the simulator in its SIMD build: every MUL_MAT/MUL_MAT_ID output of the GPU
# must have the bits of the thread-lane MMVQ kernels (Q4_K with 16 lanes on this
# AVX-512 host) and of the MMQ kernels. Carried: .carry/ggml, .carry/bin/ggml.test.xz
# (GOEXPERIMENT=simd go test -c -tags cuda -ldflags='-s -w' -o ggml.test ./gpu/ggml; xz -9).
# Usage (repo root on the device): OUT=... N=cases bash docs/device-runs/2026-12-02-run6.sh
set -o pipefail
export PATH=/usr/local/cuda/bin:$PATH
T0=$(date +%s); t() { echo "[$(( $(date +%s) - T0 ))s] $*" >> $OUT/log.txt; }
{ date -u; nvidia-smi -L; grep -m1 '^flags' /proc/cpuinfo | tr ' ' '\n' | grep -E '^(avx2|fma|avx512f|avx512bw)$' | tr '\n' ' '; echo; } > $OUT/env.txt 2>&1
t start
xz -dc .carry/bin/ggml.test.xz > /tmp/ggml.test && chmod +x /tmp/ggml.test
cmake -S .carry/ggml -B /tmp/gb -G Ninja -DGGML_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DGGML_CUDA_FA=OFF \
  -DCMAKE_BUILD_TYPE=Release -DGGML_NATIVE=OFF -DGGML_BUILD_TESTS=OFF -DGGML_BUILD_EXAMPLES=OFF \
  -DCMAKE_LIBRARY_OUTPUT_DIRECTORY=/tmp/gb/lib > /tmp/build.log 2>&1 && cmake --build /tmp/gb -j16 >> /tmp/build.log 2>&1 || { tail -30 /tmp/build.log > $OUT/build-fail.txt; t build failed; exit 1; }
t built
( cd gpu/ggml && GGSIM_REQUIRE_GPU=1 GGSIM_GGML_DIR=/tmp/gb/lib GGSIM_CONFORMANCE_CHECKS=${N:-3000} \
  timeout 400 /tmp/ggml.test -test.run '^TestConformanceCUDA$' -test.v -test.timeout 390s > $OUT/conformance.log 2>&1; echo "rc=$?" >> $OUT/conformance.log )
t conformance done

#!/bin/bash
# ggsim device run 3 of 2026-12-02 (third session): one ggml build (CUDA sm_90 + the
# native CPU backend), then TestGLUGraphs on the H200 (GLU graphs bit-exact with ggsim),
# then `simrun bench` against ggml's CPU backend on cores 0-1 (2 threads each) while the
# fuzz campaign runs on cores 2-15. Carried: .carry/ggml (trimmed ggml d99724f2b141),
# .carry/bin (simrun.xz: GOEXPERIMENT=simd go build -tags cuda; ggml.test.xz: go test -c
# -tags cuda ./gpu/ggml), .carry/fuzz (.ci/fuzz-build output + seed-N.tar.xz).
# Usage (repo root on the device): OUT=... FZ=seconds bash docs/device-runs/2026-12-02-run3.sh
set -o pipefail
export PATH=/usr/local/cuda/bin:$PATH
T0=$(date +%s); t() { echo "[$(( $(date +%s) - T0 ))s] $*" >> $OUT/log.txt; }
{ date -u; nvidia-smi -L; lscpu | grep -E 'Model name|^CPU\(s\)|Flags' | cut -c1-400; } > $OUT/env.txt 2>&1
t start
for b in simrun ggml.test; do xz -dc .carry/bin/$b.xz > /tmp/$b && chmod +x /tmp/$b; done
cmake -S .carry/ggml -B /tmp/gb -G Ninja -DGGML_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DGGML_CUDA_FA=OFF \
  -DCMAKE_BUILD_TYPE=Release -DGGML_NATIVE=ON -DGGML_BUILD_TESTS=OFF -DGGML_BUILD_EXAMPLES=OFF \
  -DCMAKE_LIBRARY_OUTPUT_DIRECTORY=/tmp/gb/lib > /tmp/build.log 2>&1 && cmake --build /tmp/gb -j16 >> /tmp/build.log 2>&1 || { tail -30 /tmp/build.log > $OUT/build-fail.txt; t build failed; exit 1; }
t built
( cd gpu/ggml && GGSIM_REQUIRE_GPU=1 GGSIM_GGML_DIR=/tmp/gb/lib timeout 120 /tmp/ggml.test -test.run '^TestGLUGraphs$' -test.v > $OUT/glu-graphs.log 2>&1; echo "rc=$?" >> $OUT/glu-graphs.log )
t glu graphs done
( taskset -c 2-15 env OUT=$OUT/fz bash .carry/fuzz/fuzz-device.sh ${FZ:-240}s 2 > $OUT/fuzz.log 2>&1 ) &
FP=$!
# one shape per bench call (its table line is kept even if a later one runs out of time),
# most important first; no new shape after ${BENCH_END:-430} s of the run
for s in 'q4_K/.*/m=1$:3' 'q4_K/.*/m=8$:3' 'q4_K/.*/m=512$:1' 'q6_K/.*/m=1$:3' 'q8_0/.*/m=1$:3' 'iq4_xs/.*/m=1$:3' \
	'q6_K/.*/m=8$:3' 'q8_0/.*/m=8$:3' 'iq4_xs/.*/m=8$:3' 'q4_K/.*experts:1' 'q8_0/.*/m=512$:1' 'q6_K/.*/m=512$:1' 'iq4_xs/.*/m=512$:1'; do
	[ $(( $(date +%s) - T0 )) -lt ${BENCH_END:-430} ] || { t "bench: no time for $s"; continue; }
	taskset -c 0,1 /tmp/simrun bench --ggml /tmp/gb/lib --threads 2 --reps ${s##*:} --only "type=${s%:*}" >> $OUT/bench.txt 2>&1
	t "bench $s rc=$?"
done
wait $FP
t end

#!/bin/bash
# ggsim device run 4 of 2026-12-02 (fourth session): ggml's CPU backend alone, built native
# (no CUDA), then `simrun bench` on vCPUs 0-1 of the H200's host (2 threads each side,
# nothing else running): the side-by-side table on an Intel Xeon, with the thread-lane
# MMVQ kernels (Q4_K, Q8_0) beside the older 8-row ones (Q6_K, IQ4_XS at that commit).
# Run 5 is this script again with simrun built at 7ae5fb3 (every type on thread lanes).
# Carried: .carry/ggml (trimmed ggml d99724f2b141), .carry/bin/simrun.xz
# (GOEXPERIMENT=simd go build -tags cuda -ldflags='-s -w' -o simrun ./cmd/simrun; xz -9).
# Usage (repo root on the device): OUT=... bash docs/device-runs/2026-12-02-run4.sh
set -o pipefail
T0=$(date +%s); t() { echo "[$(( $(date +%s) - T0 ))s] $*" >> $OUT/log.txt; }
{ date -u; lscpu | grep -E 'Model name|^CPU\(s\)|Thread|Core|Socket|L[123]' ; grep -m1 '^flags' /proc/cpuinfo | tr ' ' '\n' | grep -E '^(avx|fma|f16c)' | tr '\n' ' '; echo; } > $OUT/env.txt 2>&1
t start
xz -dc .carry/bin/simrun.xz > /tmp/simrun && chmod +x /tmp/simrun
/tmp/simrun version >> $OUT/env.txt 2>&1
cmake -S .carry/ggml -B /tmp/gb -G Ninja -DGGML_CUDA=OFF -DGGML_NATIVE=ON -DCMAKE_BUILD_TYPE=Release \
  -DGGML_BUILD_TESTS=OFF -DGGML_BUILD_EXAMPLES=OFF -DCMAKE_LIBRARY_OUTPUT_DIRECTORY=/tmp/gb/lib > /tmp/build.log 2>&1 \
  && cmake --build /tmp/gb -j16 >> /tmp/build.log 2>&1 || { tail -30 /tmp/build.log > $OUT/build-fail.txt; t build failed; exit 1; }
t built
# one shape per bench call (its line is kept if a later one runs out of time), most
# important first; no new shape after ${BENCH_END:-450} s of the run
for s in 'q4_K/.*/m=1$:7' 'q4_K/.*/m=8$:7' 'q8_0/.*/m=1$:5' 'q8_0/.*/m=8$:5' 'q6_K/.*/m=1$:3' 'iq4_xs/.*/m=1$:3' \
	'q4_K/.*/m=512$:1' 'q4_K/.*experts:1' 'q6_K/.*/m=8$:3' 'iq4_xs/.*/m=8$:3' 'q8_0/.*/m=512$:1' 'q6_K/.*/m=512$:1' 'iq4_xs/.*/m=512$:1'; do
	[ $(( $(date +%s) - T0 )) -lt ${BENCH_END:-450} ] || { t "bench: no time for $s"; continue; }
	taskset -c 0,1 /tmp/simrun bench --ggml /tmp/gb/lib --threads 2 --reps ${s##*:} --only "type=${s%:*}" >> $OUT/bench.txt 2>&1
	t "bench $s rc=$?"
done
t end

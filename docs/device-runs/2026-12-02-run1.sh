#!/bin/bash
# ggsim device run 1 (2026-12-02 session 2): ggml build (as shipped, int8 MMA), MUFU.EX2/tanh
# probe, gpu/cuda probes, MMQ/MMQ-ID/GLU sweeps, MMQ conformance on CUDA, SASS of the GLU
# epilogues, fuzzing in the background. Everything back in at most 4 files.
set -o pipefail
S=20261202
export PATH=/usr/local/cuda/bin:$PATH
R=/tmp/r; mkdir -p $R/mufu $R/cuda $R/sass
T0=$(date +%s); t() { echo "[$(( $(date +%s) - T0 ))s] $*" >> $R/log.txt; }
{ date -u; nvidia-smi -L; nvidia-smi --query-gpu=driver_version,name --format=csv; nvcc --version | tail -2; nproc; } > $R/env.txt 2>&1
t start
( cmake -S .carry/ggml -B /tmp/gb -G Ninja -DGGML_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DGGML_CUDA_FA=OFF \
  -DCMAKE_BUILD_TYPE=Release -DGGML_NATIVE=OFF -DGGML_BUILD_TESTS=OFF -DGGML_BUILD_EXAMPLES=OFF \
  -DCMAKE_LIBRARY_OUTPUT_DIRECTORY=/tmp/gb/lib > /tmp/build.log 2>&1 && cmake --build /tmp/gb -j15 >> /tmp/build.log 2>&1; echo "rc=$?" > /tmp/build.rc ) &
BP=$!
nvcc -O3 -arch=sm_90 -use_fast_math -o /tmp/mufu_probe gpu/measure/mufu_probe.cu > $R/mufu/build.log 2>&1 && \
  timeout 170 /tmp/mufu_probe $R/mufu > $R/mufu/probe.log 2>&1; echo "probe rc=$?" >> $R/mufu/probe.log
cuobjdump -sass /tmp/mufu_probe > $R/mufu/mufu_probe.sass 2>&1
t mufu done
GGSIM_REQUIRE_GPU=1 GGSIM_GPU_OUT=$R/cuda timeout 150 .carry/bin/cuda.test -test.v -test.timeout 140s > $R/cuda/cuda-test.log 2>&1; echo "rc=$?" >> $R/cuda/cuda-test.log
t cuda tests done
wait $BP; cat /tmp/build.rc >> $R/log.txt; grep -q rc=0 /tmp/build.rc || { tail -30 /tmp/build.log > $R/build-fail.txt; }
t built
if [ -f .carry/fuzz/fuzz-device.sh ]; then ( bash .carry/fuzz/fuzz-device.sh ${FUZZT:-300s} 2 > $R/fuzz.log 2>&1 ) & FP=$!; fi
B=".carry/bin/ggml.test -test.run ^TestSweepCUDA$ -test.v -test.timeout 600s"
GGSIM_REQUIRE_GPU=1 GGSIM_GGML_DIR=/tmp/gb/lib GGSIM_SWEEP=mmq:$S:0-10000,mmqid:$S:0-5000 GGSIM_SWEEP_OUT=$R/sweep-mma.tsv \
  GGSIM_SWEEP_FULL=60 timeout 200 $B > $R/sweep-mma.log 2>&1
t sweep-mma done
[ -n "$GLUSWEEP" ] && GGSIM_REQUIRE_GPU=1 GGSIM_GGML_DIR=/tmp/gb/lib GGSIM_SWEEP=$GLUSWEEP GGSIM_SWEEP_OUT=$R/sweep-glu.tsv \
  GGSIM_SWEEP_FULL=100 timeout 100 $B > $R/sweep-glu.log 2>&1
t sweep-glu done
GGSIM_REQUIRE_GPU=1 GGSIM_GGML_DIR=/tmp/gb/lib timeout 100 .carry/bin/ggml.test -test.run '^TestConformanceCUDA$' -test.v -test.timeout 95s > $R/conformance-cuda.log 2>&1
t conformance done
O=/tmp/gb/ggml-cuda/CMakeFiles/ggml-cuda.dir
for f in mmvq unary; do
  cuobjdump -sass $O/$f.cu.o > /tmp/$f.sass 2>&1
  awk '/Function :/{if(name!="")print name, ex2, tanh, rcp, n; name=$3; ex2=tanh=rcp=n=0} /MUFU.EX2/{ex2++} /MUFU.TANH/{tanh++} /MUFU.RCP/{rcp++} {n++} END{print name, ex2, tanh, rcp, n}' /tmp/$f.sass > $R/sass/$f-functions.txt
done
for fn in $(awk '$2>0{print $1}' $R/sass/mmvq-functions.txt | head -2) $(awk '$3>0{print $1}' $R/sass/mmvq-functions.txt | head -1); do
  awk -v fn="$fn" '/Function :/{p=($3==fn)} p' /tmp/mmvq.sass; done > $R/sass/mmvq-glu-sample.sass
awk '/Function :/{p=($3 ~ /gated|swiglu_oai/)} p' /tmp/unary.sass > $R/sass/unary-glu.sass
t sass done
[ -n "$FP" ] && wait $FP; t fuzz done
xz -T8 -f $R/sweep-mma.tsv.full $R/sweep-glu.tsv.full 2>/dev/null
xz -T8 -f $R/mufu/ex2_t24.u8 $R/mufu/tanh_rle_in.u32 $R/mufu/tanh_rle_out.u32 $R/mufu/ex2_tn24.u8 $R/mufu/glu_samples.f32 $R/mufu/rsq_14.i8 $R/mufu/mufu_probe.sass 2>/dev/null
xz -T8 -f $R/sass/*.sass
tar cf $OUT/mufu.tar -C $R mufu; ls -la $R/mufu >> $R/log.txt
[ -f $R/fuzz.tar.xz ] && mv $R/fuzz.tar.xz $OUT/
t end
tar cf $OUT/results.tar -C $R --exclude mufu .
for f in $OUT/*; do if [ $(stat -c %s $f) -gt 16000000 ]; then split -b 15M $f $f.part-; rm $f; fi; done
ls -la $OUT

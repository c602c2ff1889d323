#!/usr/bin/env bash
# The bit-exact packages must never let the Go compiler fuse a float multiply-add: on
# amd64 GOAMD64=v3 only fuses x*y+z, but arm64 (Apple Silicon laptops) also fuses x*y-z
# and -(x*y)+z. Compile them for arm64 and fail on any fused instruction in non-test code.
set -euo pipefail
cd "$(dirname "$0")/.."
pkgs="./f16 ./quant ./sim ./sim/q8 ./sim/mmvq ./sim/mmq ./fp16path ./fp16path/compare"
hits=$(GOARCH=arm64 go build -gcflags=-S $pkgs 2>&1 | grep -E '\b(FMADD|FMSUB|FNMADD|FNMSUB)[SD]\b' | grep -oE '[^ (]*\.go:[0-9]+' | sort -u || true)
if [ -n "$hits" ]; then
  echo "fused float multiply-add on arm64 (write float32(a*b)+c, or sim.FMA where the GPU fuses):"
  echo "$hits"
  exit 1
fi
echo "no fused float multiply-add in $pkgs on arm64"

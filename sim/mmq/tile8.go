package mmq

import "github.com/ggsim/ggsim/sim/q8"

// tile8 is computeTile's fast path, eight columns of a tile side by side (tile8_simd.go,
// built with GOEXPERIMENT=simd on amd64). It computes and stores what computeTile
// would, bit for bit, and returns true; false where it has no kernel for kn or cannot
// take the tile (then computeTile runs its scalar loop). nil in every other build.
var tile8 func(kn *kernel, mat *matrix, y []q8.BlockMMQ, ncolsY int, p *Plan, w *TileWork, it, jt, N, M int, store func(i, j int, v float32), fixup func(i, j int, s float32)) bool

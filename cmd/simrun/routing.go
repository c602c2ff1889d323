package main

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// The routings explain can assume for MUL_MAT_ID. They are the routings of the mmqid
// sweep (oracle/oracletest), generated here with the command's own seed: they only need
// to give plausible per-expert token counts, not to reproduce a recorded case.
var routingNames = []string{"uniform", "hot", "sparse", "all-to-one"}

// routeIDs returns T tokens of U distinct expert ids in [0, E) (ids[t*U+u]) for the
// named routing, from a PCG seeded with seed:
//
//   - uniform: each token picks U distinct experts uniformly at random;
//   - hot: expert 0 in every token, the other U-1 at random;
//   - sparse: only the first max(U, E/4) experts are ever picked (the rest stay empty);
//   - all-to-one: every token picks the same experts E-1, E-2, ..., E-U.
func routeIDs(routing string, seed uint64, E, U, T int) ([]int32, error) {
	if E < 1 || U < 1 || U > E || T < 1 {
		return nil, fmt.Errorf("routing: %d experts, %d used per token, %d tokens: want 1 <= used <= experts and tokens >= 1", E, U, T)
	}
	r := rand.New(rand.NewPCG(seed, 0x6767_7369_6d)) // "ggsim"
	ids := make([]int32, 0, T*U)
	for range T {
		var set []int
		switch routing {
		case "uniform":
			set = r.Perm(E)[:U]
		case "hot":
			set = append([]int{0}, r.Perm(E - 1)[:U-1]...)
			for k := 1; k < len(set); k++ {
				set[k]++
			}
		case "sparse":
			set = r.Perm(max(U, E/4))[:U]
		case "all-to-one":
			set = make([]int, U)
			for k := range set {
				set[k] = E - 1 - k
			}
		default:
			return nil, fmt.Errorf("routing %q: want one of %s", routing, strings.Join(routingNames, ", "))
		}
		for _, e := range set {
			ids = append(ids, int32(e))
		}
	}
	return ids, nil
}

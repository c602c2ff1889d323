package moe_test

import (
	"fmt"

	"github.com/ggsim/ggsim/moe"
)

// Three tokens route to two of three experts each; one activation row per token, so
// ggml quantizes each token once and scatters it (the inverse map).
func ExampleRoute() {
	ids := []int32{
		1, 0, // token 0
		0, 1, // token 1
		1, 2, // token 2
	}
	r, err := moe.Route(ids, 3, 2, 3, 1)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("expert_bounds:", r.ExpertBounds)
	fmt.Println("ids_dst:      ", r.IDsDst)
	fmt.Println("inverse:      ", r.Inverse, r.IDsSrc1)
	fmt.Println("src1 rows:    ", r.SrcRows())

	_, err = moe.Route([]int32{0, 3}, 1, 2, 3, 2)
	fmt.Println(err)
	// Output:
	// expert_bounds: [0 2 5 6]
	// ids_dst:       [1 2 0 3 4 5]
	// inverse:       true [2 0 1 3 4 5]
	// src1 rows:     [0 1 0 1 2 2]
	// moe: expert id 3 of token 0, slot 1 is outside [0, 3)
}

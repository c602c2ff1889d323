package oracletest_test

import (
	"fmt"

	"github.com/ggsim/ggsim"
	"github.com/ggsim/ggsim/oracle/oracletest"
	"github.com/ggsim/ggsim/sim"
)

// A digest sweep run in two shards: each computes its chunks' digests, and the whole
// digest combines them in index order, whoever computed them.
func ExampleCombineDigests() {
	s, _ := oracletest.ParseDigestSweep("q8_1 chunks=2")
	dev, _ := sim.Lookup("H200") // not used by q8_1 sweeps
	var chunks []string
	for c := range s.Chunks { // shard 0/2 would run chunk 0, shard 1/2 chunk 1
		d, err := s.RunChunk(c, ggsim.NewSimulator(), dev)
		if err != nil {
			fmt.Println(err)
			return
		}
		chunks = append(chunks, d)
	}
	whole, _ := oracletest.CombineDigests(s, chunks)
	fmt.Println(s, len(whole))
	// Output: q8_1 chunks=2 64
}

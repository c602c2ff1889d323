package oracle

// Test helpers shared with the external test package (verify_test.go).
var (
	QuantizeRows = quantizeRows
	GoldenLike   = goldenLike
	// GemmParallelOrder is gemmParallel: which of gonum's summation orders a product takes.
	GemmParallelOrder = gemmParallel
)

type Fataler = fataler

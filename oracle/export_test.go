package oracle

// Test helpers shared with the external test package (verify_test.go).
var (
	QuantizeRows = quantizeRows
	GoldenLike   = goldenLike
)

type Fataler = fataler

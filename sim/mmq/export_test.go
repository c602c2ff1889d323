package mmq

// Test helpers for the external tests (package mmq_test, which may import oracle).
var (
	PlanFor    = planFor
	RandomCase = randomCase
)

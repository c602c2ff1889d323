//go:build amd64 && !amd64.v3

package oracle_test

// refDigestRecorded is refDigest as commit 47dbb87's whole-matrix references gave it on
// amd64 below GOAMD64=v3 (v1 and v2 alike: no fused float64 multiply-add).
const refDigestRecorded = "ac0546e681517bb67a7f81521b94264bda8ebfe0d20f9c33120a5440d57a9347"

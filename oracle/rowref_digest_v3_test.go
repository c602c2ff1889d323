//go:build amd64.v3

package oracle_test

// refDigestRecorded is refDigest as commit 47dbb87's whole-matrix references gave it
// with GOAMD64=v3 (and v4, the same), where Go fuses the references' float64 a*b+c.
const refDigestRecorded = "1e52f56abb38cc892a8e11f5c33f8eea75ad8185a1ce7e90c9e08504590e462c"

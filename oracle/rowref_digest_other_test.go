//go:build !amd64

package oracle_test

// refDigestRecorded is empty: no digest of commit 47dbb87's references was recorded on
// this architecture, whose float64 multiply-adds the compiler may fuse differently.
const refDigestRecorded = ""

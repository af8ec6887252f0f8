//go:build purego

package edwards4

// puregoTag: built with -tags purego, which leaves the kernels out.
const puregoTag = true

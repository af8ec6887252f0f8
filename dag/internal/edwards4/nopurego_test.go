//go:build !purego

package edwards4

const puregoTag = false

//go:build !amd64 || purego

package sha8

const hasKernel = false

func blocks(state *[8][8]uint64, buf []byte, stride int, counts *[8]uint64, max int) {
	panic("sha8: no kernel")
}

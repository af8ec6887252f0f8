//go:build amd64 && !purego

package sha8

import "golang.org/x/sys/cpu"

//go:generate go run gen.go

// hasKernel reports whether sha8_amd64.s runs here: AVX-512 with its byte
// shuffles (BW).
var hasKernel = cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW

// blocksAVX512 runs max blocks of the eight lanes through the compression
// function: lane j's block b is the 128 bytes at buf + j·stride + 128·b;
// state[i][j] is word i of lane j's state, updated only for blocks b <
// counts[j].
//
//go:noescape
func blocksAVX512(state *[8][8]uint64, buf *byte, stride int, counts *[8]uint64, max int)

func blocks(state *[8][8]uint64, buf []byte, stride int, counts *[8]uint64, max int) {
	blocksAVX512(state, &buf[0], stride, counts, max)
}

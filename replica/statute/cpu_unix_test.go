//go:build unix

package statute

import (
	"syscall"
	"testing"
	"time"
)

// cpuTime returns the process's user+system CPU time. On a shared machine
// the wall time of a benchmark measures the neighbours as much as the code;
// CPU time per op is reported beside it (it includes GC workers).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU reports CPU ms per op since start.
func reportCPU(b *testing.B, start time.Duration) {
	if b.N > 0 {
		b.ReportMetric(float64(cpuTime()-start)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
	}
}

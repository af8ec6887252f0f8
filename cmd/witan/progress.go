package main

import (
	"fmt"
	"io"
	"os"
	"strings"
)

// progress draws a one-line progress bar on a terminal, and nothing when
// its writer is not one (a pipe, a file, a test's buffer), so that output
// meant for machines stays clean.
type progress struct {
	w     io.Writer
	label string
	total int
	last  int
}

func newProgress(w io.Writer, label string, total int) *progress {
	if f, ok := w.(*os.File); !ok || !isTerminal(f) {
		w = nil
	}
	return &progress{w: w, label: label, total: total, last: -1}
}

func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// set shows done of total (total may grow).
func (p *progress) set(done, total int) {
	if p == nil || p.w == nil {
		return
	}
	p.total = max(total, done, 1)
	const width = 30
	n := done * width / p.total
	if n == p.last && done != p.total {
		return
	}
	p.last = n
	fmt.Fprintf(p.w, "\r%-10s [%s%s] %d/%d", p.label, strings.Repeat("#", n), strings.Repeat(" ", width-n), done, p.total)
}

// done ends the bar's line.
func (p *progress) done() {
	if p == nil || p.w == nil || p.last < 0 {
		return
	}
	fmt.Fprintln(p.w)
}

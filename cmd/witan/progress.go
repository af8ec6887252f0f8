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
	last  int    // #s drawn last, -1 before the first draw
	text  string // text drawn last
}

// progressWidth is the bar's width in characters.
const progressWidth = 30

// newProgress returns a bar on the program's stderr, or on its
// progressTo when a test set one (drawn then though it is no terminal).
func (m *Main) newProgress(label string, total int) *progress {
	if m.progressTo != nil {
		return &progress{w: m.progressTo, label: label, total: total, last: -1}
	}
	return newProgress(m.Stderr, label, total)
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

// set shows done of total (total may grow). It redraws only when the
// bar moves or the work completes: callers may call it for every item.
func (p *progress) set(done, total int) {
	if p == nil || p.w == nil {
		return
	}
	p.total = max(total, done, 1)
	if done*progressWidth/p.total == p.last && done != p.total {
		return
	}
	p.show(uint64(done), uint64(p.total), fmt.Sprintf("%d/%d", done, p.total))
}

// show fills the bar to done/total (done is clamped to total; a zero
// total draws an empty bar) and writes text after it. It redraws only
// when the bar or the text changed.
func (p *progress) show(done, total uint64, text string) {
	if p == nil || p.w == nil {
		return
	}
	n := 0
	if total > 0 {
		n = int(min(done, total) * progressWidth / total)
	}
	if n == p.last && text == p.text {
		return
	}
	// Pad over the previous text so that a shorter line leaves no tail.
	pad := max(0, len(p.text)-len(text))
	p.last, p.text = n, text
	fmt.Fprintf(p.w, "\r%-10s [%s%s] %s%s", p.label, strings.Repeat("#", n), strings.Repeat(" ", progressWidth-n), text, strings.Repeat(" ", pad))
}

// done ends the bar's line.
func (p *progress) done() {
	if p == nil || p.w == nil || p.last < 0 {
		return
	}
	fmt.Fprintln(p.w)
}

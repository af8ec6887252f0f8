// Command profplot draws where CPU profiles spend their time, by stage, as
// an SVG: for each stage a bar per profile, in microseconds of CPU per
// entry (the profile's samples in that stage ÷ the entries the run
// handled), so that two runs of different sizes (S11 ingest at 200k and
// at 1M) or two versions of the code compare stage by stage.
//
// Each profile is read as the text of `go tool pprof -traces`, and each
// sample goes to the first stage, in the order of the stage set, one of
// whose patterns occurs in a function of its stack (so a stage nested in
// another comes before it); samples no stage claims go to "other".
//
//	go tool pprof -traces s11-200k.cpu > /tmp/200k.txt
//	go tool pprof -traces s11-1m.cpu > /tmp/1m.txt
//	go run ./scripts/profplot -set ingest -title "S11 ingest on disk" \
//		200k=200000=/tmp/200k.txt 1M=1000000=/tmp/1m.txt > docs/img/s11-cpu.svg
//
// The arguments are LABEL=ENTRIES=FILE; -set names the stage set (ingest:
// a replica taking peers' envelopes, as S11 and a sync's receiver do;
// sync: both sides of a node-to-node sync; wait: a block profile of S11
// ingest, the time the ingest's own goroutines spent blocked, by what
// they waited for, Badger's idle background loops left out). -table
// prints the same figures as a Markdown table instead.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"html"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// stage is a named part of the work and the function names that mark it.
type stage struct {
	name     string
	patterns []string
}

var (
	decoding     = []string{"dag.DecodeSigned", "dag.decodeSigned"}
	admission    = []string{"house.(*House).Admit", "house.(*House).admit"}
	plan         = []string{"dag.planBatch", "dag.PlanResume"}
	verification = []string{"dag.(*BatchVerifier)", "dag.(*Verifier)", "curve25519-voi", "dag/internal/edwards4", "dag/internal/msm", "dag/internal/sha8", "crypto/sha512"}
	storeTxn     = []string{"badgerstore.(*Store).putStart", "badgerstore.(*Store).putLocked", "badgerstore.(*Store).putAsync", "badgerstore.(*Store).commit", "badgerstore.(*putTxn)", "badgerstore.(*Store).land"}
	collector    = []string{"runtime.gcBgMarkWorker", "runtime.gcAssistAlloc", "runtime.bgsweep", "runtime.bgscavenge"}
)

// Stages nested in others come first: a sample goes to the first match.
var sets = map[string][]stage{
	"ingest": {
		{"decoding envelopes", decoding},
		{"signature verification", verification},
		{"House admission", admission},
		{"the store's plan", plan},
		{"the store's transaction", storeTxn},
		{"replica: the rest of Ingest", []string{"replica.(*Replica).ingestItems", "replica.(*Replica).commitPart", "replica.(*Replica).Ingest", "replica.(*Replica).PreVerify"}},
		{"Badger's writer", []string{"badger/v4.(*DB).doWrites", "badger/v4.(*DB).writeRequests", "badger/v4.(*DB).writeToLSM"}},
		{"memtable flushes", []string{"badger/v4.(*DB).flushMemtable", "badger/v4.(*DB).handleMemTableFlush", "buildL0Table"}},
		{"Badger's compactions", []string{"badger/v4.(*levelsController)", "subcompact"}},
		{"syncs (msync, fdatasync)", []string{"syscall.Fdatasync", "unix.Msync", "syscall.Fsync", "unix.Fdatasync"}},
		{"the collector", collector},
	},
	"sync": {
		{"sender: serving the log", []string{"sync.(*Engine).streamLog", "sync.(*batcher)", "(*Store).ScanLog", "(*Store).LogEntries", "sync.(*Engine).respond", "sync.(*Engine).Serve"}},
		{"receiver: decoding envelopes", decoding},
		{"receiver: signature verification", verification},
		{"receiver: House admission", admission},
		{"receiver: the store's plan", plan},
		{"receiver: the store's transaction", storeTxn},
		{"receiver: the replica's Ingest, the rest", []string{"replica.(*Replica).ingestItems", "replica.(*Replica).commitPart", "replica.(*Replica).Ingest", "replica.(*Replica).PreVerify", "synctest.(*Replica).Ingest", "synctest.(*Replica).putAsync"}},
		{"receiver: the stream (frames, inflating, batches)", []string{"compress/flate", "sync.inflate", "sync.DecodeBatch", "sync.(*conn)", "sync.(*Engine).receive", "sync.(*Engine).Pull", "node.(*Node).Ingest", "node.(*Node).Prepare"}},
		{"Badger's writer, flushes and compactions", []string{"badger/v4.(*DB).doWrites", "badger/v4.(*DB).writeRequests", "badger/v4.(*DB).flushMemtable", "badger/v4.(*DB).handleMemTableFlush", "badger/v4.(*levelsController)", "unix.Msync"}},
		{"libp2p (Noise, yamux, TCP)", []string{"go-libp2p", "go-yamux", "flynn/noise", "chacha20poly1305"}},
		{"the collector", collector},
	},
	"wait": {
		{"writer: a new transaction waits for the commits before it", []string{"badgerstore.(*Store).nextTxn"}},
		{"writer: its other waits in Ingest", []string{"replica.(*Replica).Ingest"}},
		{"landing: a commit waits for Badger's synced write", []string{"badgerstore.(*Store).land"}},
		{"read-ahead: waits for both halves of a frame's verification", []string{"replica.(*Replica).PreVerify"}},
		{"read-ahead: waits for Ingest to take a frame", []string{"BenchmarkS11Ingest.func1"}},
	},
}

// dropOther: sets whose unclaimed samples are not the run's work (a block
// profile's idle loops).
var dropOther = map[string]bool{"wait": true}

// profile is one run: its label, its entries and CPU per stage.
type profile struct {
	label   string
	entries int
	byStage []time.Duration // one per stage, then "other"
}

// perEntry returns each stage's figure per entry, in tenths of a
// microsecond (micros), and their sum.
func (p profile) perEntry() (vs []int64, total int64) {
	vs = make([]int64, len(p.byStage))
	for i, d := range p.byStage {
		vs[i] = micros(d, p.entries)
		total += vs[i]
	}
	return vs, total
}

func main() {
	set := flag.String("set", "ingest", "stage set: ingest, sync or wait")
	title := flag.String("title", "CPU per entry by stage", "the picture's title")
	table := flag.Bool("table", false, "print a Markdown table, not an SVG")
	flag.Parse()
	stages, ok := sets[*set]
	if !ok || flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: profplot [-set ingest|sync|wait] [-title T] [-table] LABEL=ENTRIES=TRACES ...")
		os.Exit(2)
	}
	var ps []profile
	for _, arg := range flag.Args() {
		p, err := load(arg, stages)
		if err != nil {
			fmt.Fprintln(os.Stderr, "profplot:", err)
			os.Exit(1)
		}
		ps = append(ps, p)
	}
	names := make([]string, 0, len(stages)+1)
	for _, s := range stages {
		names = append(names, s.name)
	}
	if dropOther[*set] {
		for i := range ps {
			ps[i].byStage = ps[i].byStage[:len(stages)]
		}
	} else {
		names = append(names, "other")
	}
	if *table {
		printTable(os.Stdout, names, ps)
		return
	}
	unit := "µs of CPU per entry, by stage (profile samples ÷ entries)"
	if *set == "wait" {
		unit = "µs blocked per entry, by what was waited for (block profile delay ÷ entries)"
	}
	draw(os.Stdout, *title, unit, names, ps)
}

func load(arg string, stages []stage) (profile, error) {
	parts := strings.SplitN(arg, "=", 3)
	if len(parts) != 3 {
		return profile{}, fmt.Errorf("%q: want LABEL=ENTRIES=FILE", arg)
	}
	n, err := strconv.Atoi(parts[1])
	if err != nil || n <= 0 {
		return profile{}, fmt.Errorf("%q: entries must be a positive number", arg)
	}
	f, err := os.Open(parts[2])
	if err != nil {
		return profile{}, err
	}
	defer f.Close()
	byStage, err := attribute(f, stages)
	if err != nil {
		return profile{}, fmt.Errorf("%s: %w", parts[2], err)
	}
	return profile{label: parts[0], entries: n, byStage: byStage}, nil
}

// attribute reads `go tool pprof -traces` text: samples separated by
// lines of dashes, each a value ("10ms", "1.20s") before its leaf
// function, then one caller a line.
func attribute(r io.Reader, stages []stage) ([]time.Duration, error) {
	out := make([]time.Duration, len(stages)+1)
	var (
		value  time.Duration
		frames []string
		seen   bool
	)
	flush := func() {
		if !seen {
			return
		}
		out[classify(frames, stages)] += value
		value, frames, seen = 0, frames[:0], false
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "-----------+") {
			flush()
			continue
		}
		if !strings.HasPrefix(line, " ") {
			continue // the header: File, Type, Time, Duration
		}
		f := strings.Fields(line)
		if len(f) == 0 || strings.HasSuffix(f[0], ":") {
			continue // a sample's labels
		}
		if !seen {
			d, err := time.ParseDuration(f[0])
			if err != nil {
				return nil, fmt.Errorf("a sample's value %q: %v (is it a CPU profile?)", f[0], err)
			}
			value, seen = d, true
			f = f[1:]
		}
		if len(f) > 0 {
			frames = append(frames, f[0])
		}
	}
	flush()
	return out, sc.Err()
}

func classify(frames []string, stages []stage) int {
	for i, s := range stages {
		for _, fn := range frames {
			for _, p := range s.patterns {
				if strings.Contains(fn, p) {
					return i
				}
			}
		}
	}
	return len(stages)
}

// micros is a stage's CPU per entry in tenths of a microsecond, kept in
// integers so that the picture is the same on every machine.
func micros(d time.Duration, entries int) int64 {
	return (d.Nanoseconds()*10 + int64(entries)*500) / (int64(entries) * 1000)
}

func tenths(v int64) string { return fmt.Sprintf("%d.%d", v/10, v%10) }

var colors = []string{"#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948"}

func printTable(w io.Writer, names []string, ps []profile) {
	fmt.Fprint(w, "| stage |")
	for _, p := range ps {
		fmt.Fprintf(w, " %s |", p.label)
	}
	fmt.Fprint(w, "\n|---|")
	for range ps {
		fmt.Fprint(w, "---|")
	}
	fmt.Fprintln(w)
	vs, totals := perEntry(ps)
	for i, name := range names {
		fmt.Fprintf(w, "| %s |", name)
		for j := range ps {
			fmt.Fprintf(w, " %s |", tenths(vs[j][i]))
		}
		fmt.Fprintln(w)
	}
	fmt.Fprint(w, "| all |")
	for _, t := range totals {
		fmt.Fprintf(w, " %s |", tenths(t))
	}
	fmt.Fprintln(w)
}

// perEntry returns every profile's figures per entry and their sums.
func perEntry(ps []profile) (vs [][]int64, totals []int64) {
	vs, totals = make([][]int64, len(ps)), make([]int64, len(ps))
	for j, p := range ps {
		vs[j], totals[j] = p.perEntry()
	}
	return vs, totals
}

func draw(w io.Writer, title, unit string, names []string, ps []profile) {
	const (
		left, labelW, barH, gap, barMax, top = 10, 330, 14, 10, 420, 50
	)
	vs, totals := perEntry(ps)
	var most, all int64 = 1, 1
	for j := range ps {
		most = max(most, slices.Max(vs[j]))
		all = max(all, totals[j])
	}
	rowH := len(ps)*barH + gap
	height := top + (len(names)+1)*rowH + 30 + 18*len(ps)
	width := left + labelW + barMax + 80
	fmt.Fprintf(w, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="12">`+"\n", width, height)
	fmt.Fprintf(w, `<rect width="%d" height="%d" fill="white"/>`+"\n", width, height)
	fmt.Fprintf(w, `<text x="%d" y="20" font-size="14" font-weight="bold">%s</text>`+"\n", left, html.EscapeString(title))
	fmt.Fprintf(w, `<text x="%d" y="38" fill="#555">%s</text>`+"\n", left, html.EscapeString(unit))
	y := top
	row := func(name string, value func(j int) int64, scale int64) {
		fmt.Fprintf(w, `<text x="%d" y="%d" text-anchor="end">%s</text>`+"\n", left+labelW-8, y+len(ps)*barH/2+4, html.EscapeString(name))
		for j := range ps {
			v := value(j)
			bw := int(v * barMax / scale)
			fmt.Fprintf(w, `<rect x="%d" y="%d" width="%d" height="%d" fill="%s"/>`+"\n", left+labelW, y+j*barH, bw, barH-2, colors[j%len(colors)])
			fmt.Fprintf(w, `<text x="%d" y="%d" font-size="11">%s</text>`+"\n", left+labelW+bw+4, y+j*barH+barH-4, tenths(v))
		}
		y += rowH
	}
	for i, name := range names {
		row(name, func(j int) int64 { return vs[j][i] }, most)
	}
	row("all", func(j int) int64 { return totals[j] }, all)
	y += 10
	for j, p := range ps {
		fmt.Fprintf(w, `<rect x="%d" y="%d" width="12" height="12" fill="%s"/>`+"\n", left+labelW, y+j*18, colors[j%len(colors)])
		fmt.Fprintf(w, `<text x="%d" y="%d">%s (%d entries)</text>`+"\n", left+labelW+18, y+j*18+10, html.EscapeString(p.label), p.entries)
	}
	fmt.Fprintln(w, "</svg>")
}

// Command syncplot draws the fleet benchmark's curves as an SVG: it reads
// the lines sync/simnet's TestFleetScale prints ("fleet n=… ids=… …") on
// standard input and writes two panels to standard output: rounds until
// a write reaches every agent (and after a healed partition that
// reconnected) against the fleet's size, and gossip bytes per agent per
// second, busy and idle, for both kinds of message id. Both x axes are
// logarithmic; so is the bytes panel's y axis.
//
//	WITAN_FLEET=10,30,100,300,1000 go test ./sync/simnet -run TestFleetScale -v | go run ./scripts/syncplot > docs/img/fleet.svg
package main

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"
)

type point struct {
	n      float64
	ids    string
	spread float64
	heal   float64 // most rounds after a reconnecting heal
	busy   float64 // bytes per agent per second
	idle   float64
}

// roundsPerSecond: the model's rounds are 100 ms hops.
const roundsPerSecond = 10

func parse(line string) (point, bool) {
	f := strings.Fields(line)
	if len(f) == 0 || f[0] != "fleet" {
		return point{}, false
	}
	kv := map[string]string{}
	for _, x := range f[1:] {
		if k, v, ok := strings.Cut(x, "="); ok {
			kv[k] = v
		}
	}
	num := func(k string) float64 {
		v, _ := strconv.ParseFloat(kv[k], 64)
		return v
	}
	most := func(k string) float64 {
		m := 0.0
		for _, s := range strings.Split(kv[k], ",") {
			v, _ := strconv.ParseFloat(s, 64)
			m = math.Max(m, v)
		}
		return m
	}
	return point{n: num("n"), ids: kv["ids"], spread: num("spread_rounds"), heal: most("heal_reconnect_rounds"),
		busy: num("busy_bytes_node_round") * roundsPerSecond, idle: num("idle_bytes_node_round") * roundsPerSecond}, true
}

type series struct {
	name  string
	color string
	dash  bool
	pts   [][2]float64
}

type panel struct {
	title, ylabel  string
	x0, y0, w, h   float64
	xmin, xmax     float64
	ymin, ymax     float64
	logY           bool
	series         []series
	yticks, xticks []float64
}

func (p panel) px(x float64) float64 {
	return p.x0 + (math.Log10(x)-math.Log10(p.xmin))/(math.Log10(p.xmax)-math.Log10(p.xmin))*p.w
}

func (p panel) py(y float64) float64 {
	if p.logY {
		y = math.Max(y, p.ymin)
		return p.y0 + p.h - (math.Log10(y)-math.Log10(p.ymin))/(math.Log10(p.ymax)-math.Log10(p.ymin))*p.h
	}
	return p.y0 + p.h - (y-p.ymin)/(p.ymax-p.ymin)*p.h
}

func (p panel) draw(b *strings.Builder) {
	fmt.Fprintf(b, `<text x="%.0f" y="%.0f" font-size="14" font-weight="bold">%s</text>`+"\n", p.x0, p.y0-12, p.title)
	fmt.Fprintf(b, `<rect x="%.0f" y="%.0f" width="%.0f" height="%.0f" fill="none" stroke="#888"/>`+"\n", p.x0, p.y0, p.w, p.h)
	for _, x := range p.xticks {
		fmt.Fprintf(b, `<line x1="%.1f" y1="%.0f" x2="%.1f" y2="%.0f" stroke="#ddd"/>`+"\n", p.px(x), p.y0, p.px(x), p.y0+p.h)
		fmt.Fprintf(b, `<text x="%.1f" y="%.0f" font-size="11" text-anchor="middle">%g</text>`+"\n", p.px(x), p.y0+p.h+14, x)
	}
	for _, y := range p.yticks {
		fmt.Fprintf(b, `<line x1="%.0f" y1="%.1f" x2="%.0f" y2="%.1f" stroke="#ddd"/>`+"\n", p.x0, p.py(y), p.x0+p.w, p.py(y))
		fmt.Fprintf(b, `<text x="%.0f" y="%.1f" font-size="11" text-anchor="end">%s</text>`+"\n", p.x0-4, p.py(y)+4, label(y))
	}
	fmt.Fprintf(b, `<text x="%.0f" y="%.0f" font-size="11" text-anchor="middle">agents (log scale)</text>`+"\n", p.x0+p.w/2, p.y0+p.h+30)
	fmt.Fprintf(b, `<text x="%.0f" y="%.0f" font-size="11" text-anchor="middle" transform="rotate(-90 %.0f %.0f)">%s</text>`+"\n",
		p.x0-44, p.y0+p.h/2, p.x0-44, p.y0+p.h/2, p.ylabel)
	for k, s := range p.series {
		var pts []string
		for _, q := range s.pts {
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", p.px(q[0]), p.py(q[1])))
		}
		dash := ""
		if s.dash {
			dash = ` stroke-dasharray="5,3"`
		}
		fmt.Fprintf(b, `<polyline points="%s" fill="none" stroke="%s" stroke-width="2"%s/>`+"\n", strings.Join(pts, " "), s.color, dash)
		for _, q := range s.pts {
			fmt.Fprintf(b, `<circle cx="%.1f" cy="%.1f" r="3" fill="%s"/>`+"\n", p.px(q[0]), p.py(q[1]), s.color)
		}
		ly := p.y0 + 14 + float64(k)*15
		fmt.Fprintf(b, `<line x1="%.0f" y1="%.0f" x2="%.0f" y2="%.0f" stroke="%s" stroke-width="2"%s/>`+"\n", p.x0+8, ly-4, p.x0+28, ly-4, s.color, dash)
		fmt.Fprintf(b, `<text x="%.0f" y="%.0f" font-size="11">%s</text>`+"\n", p.x0+32, ly, s.name)
	}
}

func label(y float64) string {
	switch {
	case y >= 1<<20:
		return fmt.Sprintf("%g Mi", y/(1<<20))
	case y >= 1024:
		return fmt.Sprintf("%g Ki", y/1024)
	}
	return fmt.Sprintf("%g", y)
}

func main() {
	var pts []point
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		if p, ok := parse(sc.Text()); ok {
			pts = append(pts, p)
		}
	}
	if len(pts) == 0 {
		fmt.Fprintln(os.Stderr, "syncplot: no fleet lines on standard input")
		os.Exit(1)
	}
	sort.Slice(pts, func(i, j int) bool { return pts[i].n < pts[j].n })
	pick := func(ids string, f func(point) float64) [][2]float64 {
		var out [][2]float64
		for _, p := range pts {
			if p.ids == ids {
				out = append(out, [2]float64{p.n, f(p)})
			}
		}
		return out
	}
	maxRounds := 0.0
	for _, p := range pts {
		maxRounds = math.Max(maxRounds, math.Max(p.spread, p.heal))
	}
	xt := []float64{10, 30, 100, 300, 1000}
	left := panel{title: "Rounds (100 ms hops) to reach every agent", ylabel: "rounds", x0: 70, y0: 40, w: 340, h: 260,
		xmin: 8, xmax: 1300, ymin: 0, ymax: math.Ceil(maxRounds + 1), xticks: xt}
	for y := 0.0; y <= left.ymax; y += 2 {
		left.yticks = append(left.yticks, y)
	}
	left.series = []series{
		{name: "a write (seqno ids)", color: "#1f77b4", pts: pick("seqno", func(p point) float64 { return p.spread })},
		{name: "a write (content ids)", color: "#ff7f0e", dash: true, pts: pick("content", func(p point) float64 { return p.spread })},
		{name: "after a heal that reconnects", color: "#2ca02c", pts: pick("content", func(p point) float64 { return p.heal })},
	}
	right := panel{title: "Gossip bytes per agent per second", ylabel: "bytes/s (log scale)", x0: 520, y0: 40, w: 340, h: 260,
		xmin: 8, xmax: 1300, ymin: 10, ymax: 1 << 20, logY: true, xticks: xt,
		yticks: []float64{10, 100, 1024, 10 << 10, 100 << 10, 1 << 20}}
	right.series = []series{
		{name: "busy, seqno ids (today)", color: "#1f77b4", pts: pick("seqno", func(p point) float64 { return p.busy })},
		{name: "idle, seqno ids (today)", color: "#1f77b4", dash: true, pts: pick("seqno", func(p point) float64 { return p.idle })},
		{name: "busy, content ids", color: "#ff7f0e", pts: pick("content", func(p point) float64 { return p.busy })},
		{name: "idle, content ids", color: "#ff7f0e", dash: true, pts: pick("content", func(p point) float64 { return p.idle })},
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="900" height="350" font-family="sans-serif">`+"\n")
	fmt.Fprintf(&b, `<rect width="900" height="350" fill="white"/>`+"\n")
	left.draw(&b)
	right.draw(&b)
	b.WriteString("</svg>\n")
	os.Stdout.WriteString(b.String())
}

package sessions

import "time"

// The reply graph of §4.5 (extension side_conversations):
//
//	R[x][y] += 1   when y speaks within the reply window of x's last turn, x ≠ y
//	B = [R ≥ k]    groups = connected components of B
//	split ⇔ at least two components have two or more members

// reply counts y's turn [t0, t1] as a reply to every voice whose last turn
// ended at most window before t0 (or overlaps it), then makes it y's last
// turn.
func (s *session) reply(y *voice, t0, t1 Time, window time.Duration) {
	for x, last := range s.lastTurn {
		if x == y.slot || last == NoTime {
			continue
		}
		if t0.Sub(last) <= window {
			s.replies[x][y.slot]++
		}
	}
	if t1 > s.lastTurn[y.slot] {
		s.lastTurn[y.slot] = t1
	}
}

// groups returns the components of B by slot: comp[slot] is the smallest
// slot of its component, and split says whether two or more components
// have two or more members.
func (s *session) groups(k int) (comp []int, split bool) {
	n := len(s.voices)
	comp = make([]int, n)
	for i := range comp {
		comp[i] = i
	}
	find := func(i int) int {
		for comp[i] != i {
			comp[i] = comp[comp[i]]
			i = comp[i]
		}
		return i
	}
	for x := 0; x < n; x++ {
		for y := x + 1; y < n; y++ {
			if s.replies[x][y] >= k || s.replies[y][x] >= k {
				a, b := find(x), find(y)
				if a > b {
					a, b = b, a
				}
				comp[b] = a
			}
		}
	}
	size := make([]int, n)
	for i := range comp {
		comp[i] = find(i)
		size[comp[i]]++
	}
	big := 0
	for _, sz := range size {
		if sz >= 2 {
			big++
		}
	}
	return comp, big >= 2
}

// group returns the voices of x's group if a room intent by x should reach
// only that group (Table 4.2: the session is split and x is sure), else nil.
func (e *Engine) group(x *voice, sure bool) []*voice {
	if !sure || !e.p.Has(ExtSideConversations) {
		return nil
	}
	comp, split := e.s.groups(e.p.RepliesForGroup)
	if !split {
		return nil
	}
	var g []*voice
	for i, c := range comp {
		if c == comp[x.slot] {
			g = append(g, e.s.voices[i])
		}
	}
	return g
}

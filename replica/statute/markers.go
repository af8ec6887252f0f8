package statute

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/witan-dev/witan/dag"
)

// The marker names of 30k §4. A marker is written [[<name>:<value>]] in a
// node's text; text that looks like a marker but names none of these is
// plain text.
const (
	MarkRef       = "ref"
	MarkDef       = "def"
	MarkSunset    = "sunset"
	MarkEffective = "effective"
	MarkApprop    = "approp"
	MarkAvail     = "avail"
	MarkApplies   = "applies"
	MarkOptIn     = "opt_in"
)

// markerNames in a fixed order: the order in which structure reports them.
var markerNames = []string{MarkRef, MarkDef, MarkSunset, MarkEffective, MarkApprop, MarkAvail, MarkApplies, MarkOptIn}

// Approp is an [[approp:<account>:<dollars>:<fiscal year>]] marker.
type Approp struct {
	Account string
	Dollars string // canonical decimal integer
	FY      int
}

// Markers are the markers of one node's text, in text order, and the
// sha256 ids its heading or text mentions. A node may carry at most one of
// each marker (30k §4); every occurrence is kept here so that the structure
// check can report the excess. A marker whose value is malformed is listed
// in Malformed and nowhere else.
type Markers struct {
	Refs      []string   // target nids
	Defs      []string   // terms
	Sunsets   []int      // days
	Effective []Date     // dates
	Approps   []Approp   // amounts
	Avails    []string   // condition ids
	Applies   [][]string // jurisdiction codes
	OptIns    []string   // program ids
	// Hashes are the distinct "sha256:<hex>" ids in the heading or text, in
	// order of first appearance: references to documents by hash, which
	// must be published in the session (D56).
	Hashes []dag.ID
	// Malformed lists "<name>: <reason>" for known markers with bad values.
	Malformed []string
}

var noMarkers = &Markers{}

// count returns how many markers of this name the node carries.
func (m *Markers) count(name string) int {
	switch name {
	case MarkRef:
		return len(m.Refs)
	case MarkDef:
		return len(m.Defs)
	case MarkSunset:
		return len(m.Sunsets)
	case MarkEffective:
		return len(m.Effective)
	case MarkApprop:
		return len(m.Approps)
	case MarkAvail:
		return len(m.Avails)
	case MarkApplies:
		return len(m.Applies)
	case MarkOptIn:
		return len(m.OptIns)
	}
	return 0
}

// Sunset returns the node's sunset in days, if it has exactly one.
func (m *Markers) Sunset() (int, bool) {
	if len(m.Sunsets) != 1 {
		return 0, false
	}
	return m.Sunsets[0], true
}

// EffectiveDate returns the node's [[effective:]] date, if it has exactly
// one.
func (m *Markers) EffectiveDate() (Date, bool) {
	if len(m.Effective) != 1 {
		return 0, false
	}
	return m.Effective[0], true
}

// ParseMarkers returns the markers of a node's heading and text.
func ParseMarkers(heading, text string) *Markers {
	return parseMarkers(heading, text)
}

func parseMarkers(heading, text string) *Markers {
	if !strings.Contains(text, "[[") && !strings.Contains(heading, "sha256:") && !strings.Contains(text, "sha256:") {
		return noMarkers
	}
	m := &Markers{}
	rest := text
	for {
		i := strings.Index(rest, "[[")
		if i < 0 {
			break
		}
		rest = rest[i+2:]
		j := strings.Index(rest, "]]")
		if j < 0 {
			break
		}
		body := rest[:j]
		colon := strings.IndexByte(body, ':')
		if colon < 0 || !isMarkerName(body[:colon]) {
			// Not a marker; resume just after "[[" so that "[[[[ref:x]]"
			// still finds the marker.
			continue
		}
		m.add(body[:colon], body[colon+1:])
		rest = rest[j+2:]
	}
	m.Hashes = scanHashes(m.Hashes, heading)
	m.Hashes = scanHashes(m.Hashes, text)
	if len(m.Refs)+len(m.Defs)+len(m.Sunsets)+len(m.Effective)+len(m.Approps)+len(m.Avails)+len(m.Applies)+len(m.OptIns)+len(m.Hashes)+len(m.Malformed) == 0 {
		return noMarkers
	}
	return m
}

func isMarkerName(s string) bool {
	for _, n := range markerNames {
		if s == n {
			return true
		}
	}
	return false
}

func (m *Markers) bad(name, format string, args ...any) {
	m.Malformed = append(m.Malformed, name+": "+fmt.Sprintf(format, args...))
}

func (m *Markers) add(name, v string) {
	switch name {
	case MarkRef:
		if err := CheckNID(v); err != nil {
			m.bad(name, "target %q is not a nid", trunc(v))
			return
		}
		m.Refs = append(m.Refs, v)
	case MarkDef:
		if v == "" || strings.ContainsAny(v, "\n\r\t") {
			m.bad(name, "term %q is empty or has a line break or tab", trunc(v))
			return
		}
		m.Defs = append(m.Defs, v)
	case MarkSunset:
		d, ok := parseUint(v, 7)
		if !ok || d == 0 {
			m.bad(name, "days %q is not a positive integer", trunc(v))
			return
		}
		m.Sunsets = append(m.Sunsets, d)
	case MarkEffective:
		d, err := ParseDate(v)
		if err != nil {
			m.bad(name, "%v", err)
			return
		}
		m.Effective = append(m.Effective, d)
	case MarkApprop:
		// <account>:<dollars>:<fiscal year>; the account may itself hold
		// colons, so split from the right.
		k := strings.LastIndexByte(v, ':')
		if k < 0 {
			m.bad(name, "%q is not <account>:<dollars>:<fiscal year>", trunc(v))
			return
		}
		fyS := v[k+1:]
		v2 := v[:k]
		k = strings.LastIndexByte(v2, ':')
		if k <= 0 {
			m.bad(name, "%q is not <account>:<dollars>:<fiscal year>", trunc(v))
			return
		}
		account, dollars := v2[:k], v2[k+1:]
		if _, ok := parseUint(dollars, 18); !ok {
			m.bad(name, "dollars %q is not an integer", trunc(dollars))
			return
		}
		fy, ok := parseUint(fyS, 4)
		if !ok || len(fyS) != 4 {
			m.bad(name, "fiscal year %q is not four digits", trunc(fyS))
			return
		}
		m.Approps = append(m.Approps, Approp{Account: account, Dollars: dollars, FY: fy})
	case MarkAvail:
		if v == "" {
			m.bad(name, "empty condition id")
			return
		}
		m.Avails = append(m.Avails, v)
	case MarkApplies:
		codes := strings.Split(v, ",")
		seen := make(map[string]bool, len(codes))
		for _, c := range codes {
			if c == "" || strings.TrimSpace(c) != c {
				m.bad(name, "code %q is empty or padded", trunc(c))
				return
			}
			if seen[c] {
				m.bad(name, "code %q is listed twice", trunc(c))
				return
			}
			seen[c] = true
		}
		m.Applies = append(m.Applies, codes)
	case MarkOptIn:
		if v == "" {
			m.bad(name, "empty program id")
			return
		}
		m.OptIns = append(m.OptIns, v)
	}
}

// parseUint parses a canonical decimal integer (no sign, no leading zero
// unless it is "0") of at most maxDigits digits.
func parseUint(s string, maxDigits int) (int, bool) {
	if s == "" || len(s) > maxDigits || (len(s) > 1 && s[0] == '0') {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.Atoi(s)
	return n, err == nil
}

func scanHashes(dst []dag.ID, s string) []dag.ID {
	for {
		i := strings.Index(s, dag.Prefix)
		if i < 0 {
			return dst
		}
		s = s[i+len(dag.Prefix):]
		if len(s) < 64 {
			return dst
		}
		if id, err := dag.ParseID(dag.Prefix + s[:64]); err == nil && (len(s) == 64 || !isHex(s[64])) {
			dup := false
			for _, x := range dst {
				if x == id {
					dup = true
					break
				}
			}
			if !dup {
				dst = append(dst, id)
			}
			s = s[64:]
		}
	}
}

func isHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' }

// StripMarkers returns text with every well-formed or malformed marker of a
// known name removed: the reading text of a node.
func StripMarkers(text string) string {
	if !strings.Contains(text, "[[") {
		return text
	}
	var b strings.Builder
	rest := text
	for {
		i := strings.Index(rest, "[[")
		if i < 0 {
			b.WriteString(rest)
			return b.String()
		}
		j := strings.Index(rest[i+2:], "]]")
		if j < 0 {
			b.WriteString(rest)
			return b.String()
		}
		body := rest[i+2 : i+2+j]
		colon := strings.IndexByte(body, ':')
		if colon < 0 || !isMarkerName(body[:colon]) {
			b.WriteString(rest[:i+2])
			rest = rest[i+2:]
			continue
		}
		b.WriteString(rest[:i])
		rest = rest[i+2+j+2:]
	}
}

package httpapi

// This file is GET /export/popolo?session= (30k D30): the session's
// voting record in the Popolo data model (popoloproject.com: Person,
// Organization, Membership, Motion, VoteEvent, Count, Vote, with Popolo's
// field names), each object with witan's "finality" beside Popolo's
// fields. At S11 scale the answer is about a hundred megabytes, so it is
// streamed: the replica's snapshot (view.Popolo: one byte per member
// per MR) is taken under its lock, then written out through a small
// buffer, never held whole. The answer carries its own labels (session,
// simulation, ephemeral, authoritative, finality) at the top of the
// object and the export's finality in the Witan-Finality header, so the
// label middleware (label.go) passes it through unbuffered.

import (
	"bufio"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica"
	"github.com/witan-dev/witan/replica/house"
)

// HeaderFinality carries, on a streamed answer, the finality its body
// states at its top: the weakest finality of anything in it.
const HeaderFinality = "Witan-Finality"

// HeaderStreamed ("true") marks an answer written as it is made, never
// held whole: its JSON carries the D54 labels itself, so label.go passes
// it through. A client that gets a body cut short (the node stopped, the
// connection broke) gets invalid JSON, never a shorter valid record.
const HeaderStreamed = "Witan-Streamed"

// Popolo vote options (popoloproject.com, Vote.option) for 30k choices. A
// void member (ballots that void each other, D-rules) is "not voting":
// present, ballots cast, none counted; the vote says "void": true.
var popoloOption = map[string]string{"approve": "yes", "reject": "no", "abstain": "abstain", "void": "not voting"}

// popoloResult is a Popolo VoteEvent/Motion result for a decided MR
// ("pass"/"fail"); an MR not merged or rejected has none.
func popoloResult(status string) string {
	switch status {
	case house.StatusMerged:
		return "pass"
	case house.StatusRejected:
		return "fail"
	}
	return ""
}

// GroupOrgID is the Popolo organization id of a session's group: groups
// are organizations whose parent is the legislature, whose id is the
// session's id.
func GroupOrgID(group string) string { return "group:" + group }

func (s *Server) popolo(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	space, err := s.spaceOf(r)
	if err != nil {
		return err
	}
	labels, err := s.sessionLabelsOf(ctx, space)
	if err != nil {
		return err
	}
	p, err := s.view.Popolo(ctx, space)
	if err != nil {
		return err
	}
	fin := p.StateFinality
	for _, ev := range p.Events {
		if ev.Finality == replica.Provisional {
			fin = replica.Provisional
		}
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set(HeaderFinality, string(fin))
	h.Set(HeaderStreamed, "true")
	w.WriteHeader(http.StatusOK)
	e := &popoloWriter{w: bufio.NewWriterSize(w, 64<<10)}
	// The head: the labels, then what the snapshot covers.
	e.raw(`{"session":`)
	e.str(labels.Session)
	if labels.Simulation {
		e.raw(`,"simulation":true`)
	}
	if labels.Ephemeral {
		e.raw(`,"ephemeral":true`)
	}
	e.raw(`,"authoritative":false,"finality":`)
	e.str(string(fin))
	e.raw(`,"entries":`)
	e.uint(p.Entries)
	e.raw(`,"checkpoint_size":`)
	e.uint(p.Checkpointed)
	sf := string(p.StateFinality)

	// persons: every key in a group, sorted by id (the string form, as
	// an electorate orders its members).
	var ids []string
	for _, g := range p.Groups {
		for _, ks := range [][]dag.Key{g.Members, g.Admins} {
			for _, k := range ks {
				ids = append(ids, k.String())
			}
		}
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	e.raw(`,"persons":[`)
	for i, ks := range ids {
		e.sep(i)
		e.raw(`{"id":`)
		e.str(ks)
		e.raw(`,"name":`)
		e.str(ks)
		e.fin(sf)
	}
	ids = nil

	// organizations: the legislature (the session), then its groups.
	e.raw(`],"organizations":[{"id":`)
	e.str(labels.Session)
	e.raw(`,"name":`)
	name := p.Label
	if name == "" {
		name = labels.Session
	}
	e.str(name)
	e.raw(`,"classification":"legislature"`)
	e.fin(sf)
	for _, g := range p.Groups {
		e.raw(`,{"id":`)
		e.str(GroupOrgID(g.ID))
		e.raw(`,"name":`)
		e.str(g.ID)
		e.raw(`,"classification":"group","parent_id":`)
		e.str(labels.Session)
		e.fin(sf)
	}

	// memberships: each group's members ("member") and admins ("admin").
	e.raw(`],"memberships":[`)
	n := 0
	for _, g := range p.Groups {
		org := GroupOrgID(g.ID)
		for _, role := range []struct {
			name string
			keys []dag.Key
		}{{"member", g.Members}, {"admin", g.Admins}} {
			for _, k := range role.keys {
				e.sep(n)
				n++
				e.raw(`{"person_id":`)
				e.str(k.String())
				e.raw(`,"organization_id":`)
				e.str(org)
				e.raw(`,"role":`)
				e.str(role.name)
				e.fin(sf)
			}
		}
	}

	// motions: one per MR, with the proposer's summary as its text.
	e.raw(`],"motions":[`)
	for i := range p.Events {
		ev := &p.Events[i]
		e.sep(i)
		e.raw(`{"id":`)
		e.str(ev.MR.ID.String())
		e.raw(`,"organization_id":`)
		e.str(labels.Session)
		e.raw(`,"text":`)
		e.str(ev.MR.Summary)
		e.raw(`,"classification":`)
		e.str(ev.MR.Kind)
		e.raw(`,"requirement":`)
		e.str(string(ev.MR.Rule.Kind))
		if res := popoloResult(ev.MR.Status); res != "" {
			e.raw(`,"result":`)
			e.str(res)
		}
		e.fin(string(ev.Finality))
	}

	// vote_events: counts (the live tally's, as GET .../tally has them)
	// and every counted member's vote.
	e.raw(`],"vote_events":[`)
	for i := range p.Events {
		if e.err != nil || ctx.Err() != nil {
			break // the client is gone: stop writing
		}
		ev := &p.Events[i]
		f := string(ev.Finality)
		id := ev.MR.ID.String()
		e.sep(i)
		e.raw(`{"id":`)
		e.str(id)
		e.raw(`,"motion_id":`)
		e.str(id)
		e.raw(`,"organization_id":`)
		e.str(labels.Session)
		if res := popoloResult(ev.MR.Status); res != "" {
			e.raw(`,"result":`)
			e.str(res)
		}
		t := ev.MR.Live.Tally
		e.raw(`,"counts":[`)
		for j, c := range []struct {
			option string
			value  uint64
		}{{"yes", t.Approve}, {"no", t.Reject}, {"abstain", t.Abstain}, {"not voting", t.Void}} {
			e.sep(j)
			e.raw(`{"option":`)
			e.str(c.option)
			e.raw(`,"value":`)
			e.uint(c.value)
			e.fin(f)
		}
		e.raw(`],"votes":[`)
		n := 0
		for j := range ev.Choices {
			k, c := ev.Vote(j)
			if c == "" {
				continue
			}
			e.sep(n)
			n++
			e.raw(`{"voter_id":"`)
			e.raw(k) // a key's string form needs no escaping
			e.raw(`","option":"`)
			e.raw(popoloOption[c])
			if c == "void" {
				e.raw(`","void":true,"finality":"`)
			} else {
				e.raw(`","finality":"`)
			}
			e.raw(f)
			e.raw(`"}`)
		}
		e.raw(`]`)
		e.fin(f)
	}
	e.raw("]}\n")
	if e.err == nil {
		e.err = e.w.Flush()
	}
	return nil // past the header, an error can only cut the body short
}

// popoloWriter appends JSON to a buffered writer and keeps the first
// write error (a client that went away).
type popoloWriter struct {
	w   *bufio.Writer
	err error
	tmp []byte
}

func (e *popoloWriter) raw(s string) {
	if e.err == nil {
		_, e.err = e.w.WriteString(s)
	}
}

func (e *popoloWriter) str(s string) {
	b, _ := json.Marshal(s) // a string always marshals
	if e.err == nil {
		_, e.err = e.w.Write(b)
	}
}

func (e *popoloWriter) uint(v uint64) {
	e.tmp = strconv.AppendUint(e.tmp[:0], v, 10)
	if e.err == nil {
		_, e.err = e.w.Write(e.tmp)
	}
}

// sep writes the comma before every element but the first.
func (e *popoloWriter) sep(i int) {
	if i > 0 {
		e.raw(",")
	}
}

// fin closes an object with its finality.
func (e *popoloWriter) fin(f string) {
	e.raw(`,"finality":"`)
	e.raw(f)
	e.raw(`"}`)
}

package memoryblock_test

import (
	"encoding/json"
	"fmt"

	mb "github.com/witan-dev/witan/memoryblock"
)

// A block travels as JSON; the receiver decodes it, checks it against what
// it holds, and keeps what its authority covers.
func ExampleAcceptBlock() {
	root := mb.Block{
		Origin:     mb.MustText("agent:ada"),
		Subject:    mb.MustText("tide tables"),
		Body:       mb.MustText("high water at 06:10"),
		Evidence:   mb.MustText("gauge 3, photographed"),
		Confidence: mb.MustValue("80"),
		ObservedAt: mb.MustText("2026-09-21T06:10:00Z"),
		Lineage:    mb.MustParents(), // a root: present and empty
	}.Seal()

	wire := root.Encode() // what goes over the network
	got, err := mb.Decode(wire)
	if err != nil {
		fmt.Println(err)
		return
	}

	held := mb.Map{} // this receiver holds nothing yet
	for _, level := range []mb.Level{0, 50} {
		r := mb.AcceptBlock(got, level, held)
		fmt.Printf("level %d (%s): accepted %v\n", level, level.Band(), r.AcceptedFields())
		for _, ref := range r.Refused {
			fmt.Printf("  refused %s: %s, required %s\n", ref.Field, ref.Code, ref.Required)
		}
	}

	// A block naming an ancestor the receiver cannot produce is refused
	// whole, never re-rooted.
	child := mb.Block{Subject: mb.MustText("confirmed"), Lineage: mb.MustParents(root.ID())}.Seal()
	r := mb.AcceptBlock(child, 100, held)
	out, _ := json.Marshal(struct {
		Accepted any  `json:"accepted"`
		Verified bool `json:"verified"`
	}{r.Accepted, r.Verified})
	fmt.Println(string(out), r.Refused[0].Field, r.Refused[0].Code)

	held.Add(root)
	fmt.Println(mb.AcceptBlock(child, 100, held).AcceptedFields())
	// Output:
	// level 0 (ordinary): accepted [origin observed_at lineage subject body]
	//   refused evidence: FIELD_BELOW_AUTHORITY, required 50
	//   refused confidence: FIELD_ALWAYS_REFUSED, required null
	// level 50 (captain): accepted [origin observed_at lineage subject body evidence]
	//   refused confidence: FIELD_ALWAYS_REFUSED, required null
	// {"accepted":null,"verified":true} lineage BLOCK_MISSING_PARENT
	// [origin observed_at lineage subject body evidence]
}

// An incoming claim that descends from something this receiver already
// holds is an echo, not corroboration.
func ExampleIsDescendantOf() {
	held := mb.Map{}
	mine := held.Add(mb.Block{Body: mb.MustText("pier 2 is closed"), Lineage: mb.MustParents()}.Seal())
	relay := held.Add(mb.Block{Body: mb.MustText("heard: pier 2 closed"), Lineage: mb.MustParents(mine)}.Seal())

	incoming := mb.Block{Body: mb.MustText("pier 2 closed, everyone says so"), Lineage: mb.MustParents(relay)}.Seal()
	d := mb.IsDescendantOf(incoming.ID(), mine, mb.Overlay(held, incoming))
	fmt.Println("echo:", d.Descendant, "steps:", len(d.Chain)-1, "checked:", d.Checked)

	h := mb.Ancestry(incoming.ID(), mb.Overlay(held, incoming))
	fmt.Println("depth:", h.Depth, "missing:", len(h.Missing), "cycle:", h.Cycle)
	// Output:
	// echo: true steps: 2 checked: 2
	// depth: 2 missing: 0 cycle: false
}

// Omitted, null and empty are three different things.
func ExampleValue_Presence() {
	for _, v := range []mb.Value{{}, mb.NullValue(), mb.MustText("")} {
		fmt.Printf("%-8s empty=%v json=%q\n", v.Presence(), v.IsEmpty(), v.JSON())
	}
	// Output:
	// omitted  empty=false json=""
	// null     empty=false json="null"
	// present  empty=true json="\"\""
}

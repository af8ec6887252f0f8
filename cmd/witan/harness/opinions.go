package harness

import (
	"bufio"
	"fmt"
	"strings"
)

// DocOpinion is one opinion of docs/opinions.md: a "###" heading and the
// paragraphs under it.
type DocOpinion struct {
	Summary string
	Body    string
}

// ParseOpinions reads the "###" items of an opinions document. A heading
// longer than 280 characters (the summary's bound) is an error.
func ParseOpinions(doc string) ([]DocOpinion, error) {
	var out []DocOpinion
	var cur *DocOpinion
	var body []string
	flush := func() {
		if cur != nil {
			cur.Body = strings.TrimSpace(strings.Join(body, "\n"))
			out = append(out, *cur)
		}
		cur, body = nil, nil
	}
	sc := bufio.NewScanner(strings.NewReader(doc))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "### "):
			flush()
			cur = &DocOpinion{Summary: strings.TrimSpace(line[4:])}
			if len(cur.Summary) > 280 {
				return nil, fmt.Errorf("opinion heading over 280 characters: %.60s…", cur.Summary)
			}
		case strings.HasPrefix(line, "#"):
			flush()
		case cur != nil:
			body = append(body, line)
		}
	}
	flush()
	for _, o := range out {
		if o.Body == "" {
			return nil, fmt.Errorf("opinion %q has no text", o.Summary)
		}
	}
	return out, nil
}

// ImplementationOpinion is the body of an opinion.publish by an
// implementation on the spec (§8): disclosed like every non-member's
// (§3 "Equal disclosure"); witan's opinions were drafted with an AI
// coding agent, and say so.
func ImplementationOpinion(o DocOpinion) map[string]any {
	return map[string]any{"subject": map[string]any{"type": "spec", "id": "30k-v0.13"}, "author_kind": "implementation",
		"on_behalf_of": nil, "stance": "neutral", "summary": o.Summary, "body": o.Body,
		"proposes": []any{}, "replies_to": nil, "evidence": []any{},
		"disclosure": map[string]any{"operator": "the witan project", "tool": "an AI coding agent (drafting)",
			"funding": []any{map[string]any{"kind": "none"}}, "affiliations": []any{},
			"ai_assistance": "assisted", "stakes": []any{}, "foreign_principal": nil}}
}

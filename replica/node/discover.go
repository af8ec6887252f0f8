package node

import (
	"context"
	"strings"

	"github.com/witan-dev/witan/dag"
)

// Discoverable is the policy witan up gives sync.Discovery.Space: whether
// the node advertises space in witan's DHT and looks up its providers
// there. A DHT observer learns which peers hold a space whose id it knows
// or guesses (docs/security.md), so discovery is opt-in:
//   - a space in named is discovered (the user named it: -discover);
//   - with sessions, so is every session whose state the node holds and
//     that is not an education session (private, non-federated);
//   - memory spaces (mem:NAME), education sessions and sessions whose
//     state the node does not hold yet are discovered only when named.
func (n *Node) Discoverable(ctx context.Context, space string, named map[string]bool, sessions bool) bool {
	if named[space] {
		return true
	}
	if !sessions || strings.HasPrefix(space, MemoryPrefix) {
		return false
	}
	id, err := dag.ParseID(space)
	if err != nil {
		return false
	}
	st, _, err := n.Replica().State(ctx, id)
	if err != nil || st == nil {
		return false
	}
	return !st.Education
}

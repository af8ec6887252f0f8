package main

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/node"
	"github.com/witan-dev/witan/sync"
)

// reachInfo is up's report on discovery beyond the LAN.
type reachInfo struct {
	Reachability string   `json:"reachability"`
	DHT          string   `json:"dht"`
	Bootstrap    []string `json:"bootstrap"`
	Discover     []string `json:"discover"`
	RelayAddrs   []string `json:"relay_addrs,omitempty"`
	// HolePunching is true once the node speaks DCUtR: it has a public
	// address to offer, its own or one a peer observed it at.
	HolePunching bool `json:"hole_punching"`
}

// discoveryFlags checks up's -bootstrap, -relay, -discover,
// -discover-sessions and -reachability and returns the sync.Discovery
// they make (its Space policy is set once the node is open) and the named
// spaces.
func discoveryFlags(bootstrap, relays, discover []string, sessions bool, reach string) (sync.Discovery, map[string]bool, error) {
	d := sync.Discovery{Reachability: reach}
	for _, a := range bootstrap {
		if err := sync.CheckPeerAddr(a); err != nil {
			return d, nil, fmt.Errorf("-bootstrap: %s", strings.TrimPrefix(err.Error(), "sync: "))
		}
	}
	for _, a := range relays {
		if err := sync.CheckPeerAddr(a); err != nil {
			return d, nil, fmt.Errorf("-relay: %s", strings.TrimPrefix(err.Error(), "sync: "))
		}
	}
	if (len(discover) > 0 || sessions) && len(bootstrap) == 0 {
		return d, nil, fmt.Errorf("-discover and -discover-sessions need -bootstrap: the DHT has no built-in peers")
	}
	if reach != "" && reach != "public" && reach != "private" {
		return d, nil, fmt.Errorf("-reachability %q: want public or private", reach)
	}
	named := map[string]bool{}
	for _, sp := range discover {
		if _, err := dag.ParseID(sp); err != nil && !strings.HasPrefix(sp, node.MemoryPrefix) {
			return d, nil, fmt.Errorf("-discover %q is neither a session id nor %sNAME", sp, node.MemoryPrefix)
		}
		named[sp] = true
	}
	if len(bootstrap) > 0 {
		d.Bootstrap = slices.Clone(bootstrap)
	}
	if len(relays) > 0 {
		d.Relays = slices.Clone(relays)
	}
	return d, named, nil
}

// watchReach prints the node's reachability and relayed addresses when
// they change, until ctx ends.
func (c *UpCommand) watchReach(ctx context.Context, sn *sync.Node, asJSON bool) {
	if sn == nil {
		return
	}
	last := ""
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		r := reachInfo{Reachability: sn.Reachability(), DHT: sn.DHTMode(), RelayAddrs: sn.RelayAddrs(), HolePunching: sn.HolePunching()}
		now := fmt.Sprint(r.Reachability, " ", r.DHT, " ", r.HolePunching, " ", strings.Join(r.RelayAddrs, " "))
		if now == last {
			continue
		}
		last = now
		if asJSON {
			json.NewEncoder(c.main.Stdout).Encode(map[string]any{"reach": r})
			continue
		}
		punch := "off (no public address yet)"
		if r.HolePunching {
			punch = "on"
		}
		fmt.Fprintf(c.main.Stdout, "  reach     %s, dht %s, hole punching %s\n", r.Reachability, r.DHT, punch)
		for _, a := range r.RelayAddrs {
			fmt.Fprintf(c.main.Stdout, "  relayed   %s\n", a)
		}
	}
}

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/witan-dev/witan/sync"
)

// RelayCommand runs a circuit relay v2 and a witan DHT bootstrap node on a
// public address, for nodes behind NATs (docs/networking.md). It holds no
// replica.
type RelayCommand struct {
	main *Main
}

type relayInfo struct {
	PeerID    string   `json:"peer_id"`
	Addrs     []string `json:"addrs"`
	Data      int64    `json:"max_data"`
	Duration  string   `json:"max_duration"`
	Reserved  int      `json:"reservations"`
	PerIP     int      `json:"reservations_per_ip"`
	Bootstrap []string `json:"bootstrap"`
}

// Run starts the relay and serves until ctx ends.
func (c *RelayCommand) Run(ctx context.Context, args []string) error {
	fs := c.main.newFlagSet("relay", "relay [-listen MULTIADDR]... [-key FILE] [-bootstrap MULTIADDR]... [-max-data SIZE] [-max-duration D] [-json]")
	var listen, boot listFlag
	fs.Var(&listen, "listen", "libp2p listen multiaddr (repeatable; default every interface, TCP and QUIC, port 4001)")
	keyFile := fs.String("key", "witan-relay.key", "the relay's libp2p key, made if missing: keep it, the address nodes are given names it")
	fs.Var(&boot, "bootstrap", "another witan DHT node's multiaddr with /p2p/ part (repeatable)")
	maxData := fs.String("max-data", "1GiB", "bytes one relayed connection may carry each way before the relay resets it (at least a sync batch, 1MiB)")
	maxDuration := fs.Duration("max-duration", sync.DefaultRelayDuration, "how long one relayed connection may last")
	reservations := fs.Int("reservations", sync.DefaultRelayReservations, "nodes that may hold a relay slot at once")
	perIP := fs.Int("per-ip", sync.DefaultRelayPerIP, "relay slots for the nodes behind one address (a school's NAT)")
	asJSON := fs.Bool("json", false, "print the startup line as JSON")
	if err := parseArgs(fs, args, 0); err != nil {
		return err
	}
	data, err := parseSize(*maxData)
	if err != nil || data < 1<<20 {
		fmt.Fprintf(c.main.Stderr, "witan relay: -max-data %q: want a size of at least 1MiB (a sync batch must fit)\n", *maxData)
		return errUsage
	}
	for _, b := range boot {
		if err := sync.CheckPeerAddr(b); err != nil {
			fmt.Fprintln(c.main.Stderr, "witan relay: -bootstrap:", strings.TrimPrefix(err.Error(), "sync: "))
			return errUsage
		}
	}
	if dir := filepath.Dir(*keyFile); dir != "." {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return err
		}
	}
	id, err := loadOrCreateP2PKey(*keyFile)
	if err != nil {
		return err
	}
	r, err := sync.NewRelay(ctx, sync.RelayConfig{ListenAddrs: listen, Identity: id, Bootstrap: boot,
		Duration: *maxDuration, Data: data, Reservations: *reservations, PerIP: *perIP})
	if err != nil {
		return err
	}
	info := relayInfo{PeerID: r.Host().ID().String(), Addrs: r.Addrs(), Data: data, Duration: maxDuration.String(),
		Reserved: *reservations, PerIP: *perIP, Bootstrap: append([]string{}, boot...)}
	if *asJSON {
		json.NewEncoder(c.main.Stdout).Encode(info)
	} else {
		w := c.main.Stdout
		fmt.Fprintln(w, "witan relay is up: circuit relay v2, witan DHT server, AutoNAT service.")
		fmt.Fprintf(w, "  peer id   %s\n", info.PeerID)
		for _, a := range info.Addrs {
			fmt.Fprintf(w, "  addr      %s\n", a)
		}
		fmt.Fprintf(w, "  limits    %s or %s each way per relayed connection; %d slots, %d per address\n",
			*maxData, info.Duration, info.Reserved, info.PerIP)
		fmt.Fprintln(w, "Give nodes one addr as: witan up -bootstrap ADDR. Press Ctrl-C to stop.")
	}
	<-ctx.Done()
	return r.Close()
}

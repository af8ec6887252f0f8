package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/memoryblock"
	"github.com/witan-dev/witan/replica/httpapi"
)

// MemoryCommand reads and writes CAT7 memory blocks on a node, over its
// memory API (/oth/v0/memory/...):
//
//	witan memory put SPACE FILE        seal a block (lineage: the space's heads
//	                                   unless the file names one) and store it
//	witan memory get SPACE HASH        read a block at an authority -level
//	witan memory ancestry SPACE HASH   a block's lineage, back to its roots
//	witan memory heads SPACE           the space's frontier
//
// A refusal prints its code (FIELD_…, LEVEL_…) and exits 1.
type MemoryCommand struct {
	main *Main
}

func (c *MemoryCommand) Run(ctx context.Context, args []string) error {
	verbs := map[string]int{"put": 2, "get": 2, "ancestry": 2, "heads": 1}
	usages := map[string]string{
		"put":      "memory put [-node URL] SPACE FILE",
		"get":      "memory get [-node URL] [-level N] SPACE HASH",
		"ancestry": "memory ancestry [-node URL] SPACE HASH",
		"heads":    "memory heads [-node URL] SPACE",
	}
	if len(args) == 0 || verbs[args[0]] == 0 {
		return c.main.groupHelp(args, "memory", []verbHelp{
			{"put SPACE FILE", "seal the block whose fields FILE holds (JSON) and store it; its lineage is the space's heads unless FILE names one"},
			{"get SPACE HASH", "read a block at an authority -level: the fields it may see, and why not the others"},
			{"ancestry SPACE HASH", "a block's lineage, back to its roots"},
			{"heads SPACE", "the space's newest blocks"},
		})
	}
	verb := args[0]
	fs := c.main.newFlagSet("memory "+verb, usages[verb])
	node := fs.String("node", defaultNode(), nodeHelp)
	level := new(int)
	if verb == "get" {
		level = fs.Int("level", 0, "the authority level to read at")
	}
	if err := parseArgs(fs, args[1:], verbs[verb]); err != nil {
		return err
	}
	client := &httpapi.Client{BaseURL: *node}
	base := "/memory/" + url.PathEscape(fs.Arg(0))
	var out json.RawMessage
	switch verb {
	case "heads":
		if err := client.Get(ctx, base+"/heads", nil, &out); err != nil {
			return err
		}
	case "get", "ancestry":
		id, err := dag.ParseID(fs.Arg(1))
		if err != nil {
			return fmt.Errorf("block hash: %w", err)
		}
		p, q := base+"/blocks/"+id.String(), url.Values{}
		if verb == "ancestry" {
			p += "/ancestry"
		} else if *level != 0 {
			q.Set("level", strconv.Itoa(*level))
		}
		if err := client.Get(ctx, p, q, &out); err != nil {
			return err
		}
	case "put":
		f, err := os.Open(fs.Arg(1))
		if err != nil {
			return err
		}
		data, err := io.ReadAll(io.LimitReader(f, memoryblock.MaxBlockSize+1))
		f.Close()
		if err != nil {
			return err
		}
		b, err := memoryblock.Decode(data)
		if err != nil {
			return err
		}
		if b.Lineage.Presence() == memoryblock.Omitted {
			// Lineage: what this writer has seen, the space's heads.
			var h struct {
				Heads []dag.ID `json:"heads"`
			}
			if err := client.Get(ctx, base+"/heads", nil, &h); err != nil {
				if he, ok := err.(*httpapi.Error); !ok || he.Status != http.StatusNotFound {
					return err
				}
			}
			if b.Lineage, err = memoryblock.ParentsOf(h.Heads...); err != nil {
				return err
			}
		}
		b = b.Seal() // the CAT7 hash
		if err := client.Do(ctx, http.MethodPost, base+"/blocks", nil, b.Encode(), &out); err != nil {
			return err
		}
	}
	_, err := fmt.Fprintln(c.main.Stdout, strings.TrimSpace(string(out)))
	return err
}

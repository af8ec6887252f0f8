package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/author"
	"github.com/witan-dev/witan/replica/classroom"
	"github.com/witan-dev/witan/replica/httpapi"
)

// ClassCommand starts and enrols a class from the command line, as the
// classroom page's teacher does:
//
//	witan class start -key FILE [-label NAME]   a session from the template:
//	                                            three short class rules, a
//	                                            majority of the class to
//	                                            change them; the key is its
//	                                            first member and admin
//	witan class enrol -key FILE CODE...         add students to the roster
//	                                            by the codes their pages
//	                                            show (or their keys)
type ClassCommand struct {
	main *Main
	now  func() time.Time
}

func (c *ClassCommand) Run(ctx context.Context, args []string) error {
	verbs := map[string]int{"start": 0, "enrol": -1}
	if _, ok := verbs[firstArg(args)]; !ok {
		w, err := c.main.Stderr, errUsage
		if len(args) == 1 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help") {
			w, err = c.main.Stdout, errHelp
		} else if len(args) > 0 {
			fmt.Fprintf(w, "witan class: unknown verb %q (want start or enrol)\n", args[0])
		} else {
			fmt.Fprintln(w, "witan class: say start or enrol")
		}
		c.main.verbHelp(w, "class", []string{
			"class start -key FILE [-node URL] [-label NAME]",
			"class enrol -key FILE [-node URL] [-session ID] CODE..."})
		return err
	}
	verb := args[0]
	if verb == "start" {
		fs := c.main.newFlagSet("class start", "class start -key FILE [-node URL] [-label NAME]")
		key := fs.String("key", "witan.key", "the teacher's member key (witan keygen)")
		node := fs.String("node", defaultNode(), nodeHelp)
		label := fs.String("label", "Class rules", "the name of the class")
		if err := parseArgs(fs, args[1:], 0); err != nil {
			return err
		}
		signer, err := readKeyFile(*key)
		if err != nil {
			return err
		}
		now := c.now
		if now == nil {
			now = time.Now
		}
		a, err := author.New(author.Options{Signer: signer, Clock: now})
		if err != nil {
			return err
		}
		txs, err := a.StartClass(ctx, *label)
		if err != nil {
			return err
		}
		s := &writer{client: &httpapi.Client{BaseURL: *node}, author: a, session: txs[0].Made, o: &writeOpts{main: c.main}}
		if err := s.submit(ctx, txs); err != nil {
			return err
		}
		fmt.Fprintf(c.main.Stdout, "class %q started: session %s\n", *label, txs[0].Made)
		return nil
	}
	fs := c.main.newFlagSet("class enrol", "class enrol -key FILE [-node URL] [-session ID] CODE...")
	w := writeFlags(c.main, fs)
	if err := parse(fs, args[1:]); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		fmt.Fprintln(c.main.Stderr, "witan class enrol: name at least one student's code (their page shows it) or key")
		return errUsage
	}
	var keys []dag.Key
	for _, code := range fs.Args() {
		k, _, err := classroom.ParseEnrolCode(code)
		if err != nil {
			return errors.New(httpapi.PlainDetail(err.Error()))
		}
		keys = append(keys, k)
	}
	*w.yes = true
	s, err := w.open(ctx, c.now)
	if err != nil {
		return err
	}
	st, err := s.state(ctx)
	if err != nil {
		return err
	}
	g, added, err := author.Enrol(st, keys)
	if err != nil {
		return err
	}
	if len(added) == 0 {
		fmt.Fprintln(c.main.Stdout, "every key is in the roster already: nothing signed")
		return nil
	}
	tx, err := s.author.GroupUpdate(ctx, s.session, g, nil)
	if err != nil {
		return err
	}
	if err := s.submit(ctx, []author.Tx{tx}); err != nil {
		return err
	}
	fmt.Fprintf(c.main.Stdout, "roster: %d members\n", len(g.Members))
	return nil
}

func firstArg(args []string) string {
	if len(args) == 0 {
		return ""
	}
	return args[0]
}

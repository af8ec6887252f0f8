package main

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"syscall"

	"github.com/witan-dev/witan/replica/httpapi"
)

// userMessage says what went wrong in the user's words: a node that does
// not answer is named with how to start one, and the Go package prefixes
// of the library's errors are left out.
func userMessage(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		where := ue.URL
		if u, perr := url.Parse(ue.URL); perr == nil {
			where = u.Scheme + "://" + u.Host
		}
		if errors.Is(err, syscall.ECONNREFUSED) {
			return fmt.Sprintf("no node answers at %s (connection refused): is it running? Start one with \"witan up\", or name another with -node URL or $WITAN_NODE", where)
		}
		return fmt.Sprintf("cannot reach the node at %s: %s", where, httpapi.PlainDetail(ue.Err.Error()))
	}
	var he *httpapi.Error
	if errors.As(err, &he) {
		// "DETAIL (CODE)", then the next step where there is one: the
		// code is for looking up, the detail for reading.
		msg := fmt.Sprintf("HTTP %d (%s)", he.Status, string(he.Problem.Code))
		if he.Problem.Detail != "" {
			msg = fmt.Sprintf("%s (%s)", httpapi.PlainDetail(he.Problem.Detail), string(he.Problem.Code))
		}
		if hint := nextStep(he); hint != "" {
			msg += "; " + hint
		}
		return httpapi.PlainDetail(strings.Replace(err.Error(), he.Error(), msg, 1))
	}
	return httpapi.PlainDetail(err.Error())
}

// nextStep says what to do about a node's refusal, when witan knows.
func nextStep(e *httpapi.Error) string {
	d := httpapi.PlainDetail(e.Problem.Detail)
	switch {
	case e.Problem.Code == httpapi.CodeNotFound && strings.HasPrefix(d, "unknown space"):
		return "witan sessions lists the sessions this node holds, witan sessions -available those its peers announce"
	case e.Problem.Code == httpapi.CodeNotFound && strings.HasPrefix(d, "block "):
		if _, space, ok := strings.Cut(strings.TrimSuffix(d, ": not found"), " in "); ok {
			return "witan memory heads " + space + " shows the space's newest blocks"
		}
	}
	return ""
}

package dag

import "context"

// sourceKey is the context key of WithSource.
type sourceKey struct{}

// WithSource returns ctx naming src as the origin of what is written
// under it: "peer:<libp2p id>" for entries a peer sent, "http:<address>"
// for a client's submission. A replica charges what it refuses or keeps
// waiting to the source (its bounded quarantine and pending entries are
// counted per source), so one source cannot crowd out the others.
func WithSource(ctx context.Context, src string) context.Context {
	return context.WithValue(ctx, sourceKey{}, src)
}

// SourceOf returns the source WithSource put in ctx, or "" (the node
// itself: a program using the library directly).
func SourceOf(ctx context.Context) string {
	s, _ := ctx.Value(sourceKey{}).(string)
	return s
}

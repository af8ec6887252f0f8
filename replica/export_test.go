package replica

// NoPipeline makes r write every part of a peer's Ingest with Put, each
// commit waited for before the next part is planned: the benchmarks
// compare the two ways in one process.
func NoPipeline(r *Replica) { r.noPipeline = true }

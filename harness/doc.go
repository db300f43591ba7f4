// Package harness turns environment steps into store records: a Recorder
// takes an episode's call (action kind and arguments) and its steps
// (structured state, events, optional frames) and, on End, computes from the
// recorded states alone the index row, summary, tags, outcome, grid rows and
// turn-log lines in the paper's form, and writes them through an
// episodes.Writer. It also implements the line protocol of `mfmd record`.
//
// It does not run models, query the index or render views.
package harness

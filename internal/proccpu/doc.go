// Package proccpu reads the CPU time the running process has used, for
// benchmarks that report it beside their wall time: on a machine whose
// load moves, the CPU a piece of work took varies less than its wall time,
// and two benchmarks of the same work compare better by both.
package proccpu

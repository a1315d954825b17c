// Package engine wires Talaria's parts into a running process: the store, the
// Temporal server (embedded, or an external one), the client and the worker.
//
// It also owns $TALARIA_HOME's process lock and the serve.json file through
// which `talaria chat` finds a running `talaria serve` and talks to it as a
// client instead of starting a second embedded server on the same files.
package engine

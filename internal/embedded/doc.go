// Package embedded runs a complete Temporal server (frontend, history,
// matching and worker services) inside the Talaria process.
//
// Two storage modes are offered:
//
//   - File mode (the default) keeps the workflow state in DataDir/temporal.db
//     and the visibility records (the list of workflows) in
//     DataDir/visibility.db, SQLite databases in WAL journal mode with
//     synchronous=NORMAL, each with its own connection. Committed
//     transactions survive a crash or SIGKILL of the process, so workflows
//     resume when the server is started again on the same directory. The
//     visibility file has only the indexes that queries use (see
//     visibilityIndexes).
//   - Ephemeral mode keeps everything in an in-memory SQLite database. It is
//     meant for tests; state is lost when the process exits.
//
// Start returns only once the frontend answers requests and the configured
// namespace is registered and usable. The server is tuned for a single node
// (see defaultDynamicConfig), its internal services find each other through
// a static host list instead of gossip membership, pprof is off, metrics
// go to Options.Meter when set (else nowhere), and its logs are bridged to
// log/slog.
//
// With Options.TLS, every gRPC port of the server (frontend, history,
// matching, worker) requires mutual TLS: only a client presenting a
// certificate signed by the credential's CA connects, so other local users
// cannot reach the server even on loopback. NewTLS makes such a credential.
//
// Known limits of the underlying SQLite plugin: it keeps one connection per
// database open for the lifetime of the process, even after Stop. A restart
// within the same process therefore reuses that connection, and each
// ephemeral server keeps its memory until the process exits.
package embedded

// Package e2e tests the real talaria binary end to end: it is built once,
// then driven as a user would, against the embedded Temporal server, real
// SQLite files and the scripted model of package fakellm.
package e2e

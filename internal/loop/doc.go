// Package loop holds the pure decision functions of Talaria's conversation
// loop: tool-name repair, argument checks, the guardrail controller and the
// like. Each is a small deterministic function with a table test; the workflow
// and its activities call them.
package loop

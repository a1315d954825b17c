// Package tools holds Talaria's tool registry and the built-in tools the
// model can call ([BuiltinNames] lists them; `talaria tools` shows them).
//
// A built-in tool is one file: a [Spec] over a typed argument struct, whose
// JSON schema is derived from the struct and whose arguments are decoded
// strictly ([Define]), with its [Meta] (toolset, prompt guidance, approval
// note, whether execute_code may call it), added to the catalog there
// ([Builtins]). Toolsets, the prompt's guidance and execute_code's callable
// tools are derived from the catalog; docs/contributing.md walks through
// adding one. Every built-in tool is one (execute_code keeps a
// definition of its own, which names the tools a program may call).
//
// Every tool describes itself to the model with an OpenAI function-calling
// definition (a JSON schema of its arguments) and runs with an [Env] that
// carries the session's working directory, identifiers and the todo store.
// Argument names follow the Hermes agent so prompts and models trained on it
// work unchanged.
//
// Tool results are compact JSON strings that the model can parse. A
// [Registry] turns every kind of failure (unknown tool, malformed JSON
// arguments, a tool error, even a panic inside a tool) into a [Result] with
// IsError set, so a conversation turn never aborts because of a bad call.
// [Registry.RunBatch] runs the tool calls of one model response
// concurrently and returns the results in the original call order.
// A quick tool ([QuickTool]: it runs inside the workflow task) has a
// deadline ([QuickTimeout]): a call that overruns it is answered "timed
// out" and abandoned, even if it is stuck in a system call. File tools
// open without waiting and handle only regular files: a FIFO, socket,
// device or directory is refused with an error naming it.
//
// Arguments are decoded once, strictly: keys by their exact names, and an
// object repeating a key (also when equal but for case) is invalid, so what
// approval assesses ([TerminalCall], [TerminalAssessText]) is what the
// terminal runs, in the directory it runs in.
//
// A [Policy] in the Env bounds what tools touch. Subprocesses start from an
// environment allowlist ([BaseEnv] plus configured names) that never holds a
// configured secret. File tools resolve paths, symlinks included, and write
// only under the working directory and the configured write roots; reads are
// free unless read roots are configured, but credential files and
// $TALARIA_HOME's secrets are never read (by any name: a hard link to one is
// refused too) or written. Shell and login start-up files, ~/bin,
// ~/.local/bin and a repository's .git/hooks and .git/config are never
// written, wherever the working directory is; a working directory that is /
// gives no write access unless / is a write root. A terminal workdir must
// lie under the same roots. Every process a terminal command (or a script
// run by [RunScript]) starts is killed when it ends: by a cgroup v2 per
// command where the worker's cgroup is writable, and by a process scan
// (parent chains, process group and a per-command marker in the
// environment). [HideWorkerEnvironment] keeps the worker's own environment
// from its commands.
//
// Definitions are byte-stable: the same registry always renders the same
// definitions in the same order, which keeps provider-side prompt caching
// effective.
package tools

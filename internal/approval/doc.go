// Package approval reads the text of a shell command and says whether it
// may run without a person's approval. It is not the boundary: every
// command the model starts runs in a kernel sandbox (package sandbox), and
// a reader of command text can only refine that decision, since every list
// of dangerous spellings has a next entry. [AssessIn] decides for where the
// command runs ([Where]):
//
//   - inside a sandbox that can write, only what destroys work in the
//     writable roots asks: recursive deletes (rm -r, find -delete or -exec
//     rm, rsync --delete), git clean -f, reset --hard and the other
//     discards; with the network on, also force pushes, SQL DROP and
//     TRUNCATE, and requests to cloud metadata addresses. Everything else
//     is Safe, because the kernel holds it;
//   - outside a sandbox (sandbox.mode: off), Safe is an allowlist: every
//     command in the text is a program known to only read (readonly.go),
//     with options that keep it so, literal arguments where they name
//     files, no secret file named, no assignment, arithmetic or write
//     redirection (but to /dev/null). Every other command asks (rule
//     not_read_only), talaria itself, interpreters and network clients
//     included;
//   - everywhere, a short list of catastrophes written plainly is Blocked,
//     refused without asking: recursive deletes, moves and permission
//     changes of /, a home or a system directory; mkfs, dd, cp or a
//     redirection onto a disk; extraction over /; fork bombs. [Escalation]
//     is the verdict on a command the model asks to run outside the
//     sandbox: a person decides, unless it is Blocked.
//
// The text is parsed with a real shell parser (mvdan.cc/sh, bash dialect)
// and every simple command in it is read, wherever it is: lists,
// pipelines, subshells, function bodies, substitutions, and the scripts
// handed to sh -c, su -c, eval and find -exec. Words are decoded without
// running anything (quotes removed, $'...' decoded); a word the shell
// builds ($X, $(...), brace expansion) is not known. Wrappers (sudo, env,
// timeout, nice, xargs, ...) are looked through to the command they run.
// cd to a literal directory moves the commands after it; to an unknown
// one it makes their paths unknown. Text that cannot be parsed, or is
// nested too deeply to read, is Dangerous (which inside a sandbox only
// matters for what it destroys).
//
// A Dangerous assessment carries a Pattern, which keys session and always
// grants (turnapi.Grants): the normalised commands it is about ("rm -rf
// ./build": options merged and sorted, paths cleaned), with where they run
// and the wrappers that change who runs them ("cd /tmp/w && ", "sudo "),
// several joined by " ; ". A grant of rm -rf ./build covers rm -fr build/
// and never rm -rf ./src.
//
// Every function is pure and deterministic, and never panics.
package approval

// Package sandbox runs the commands the model starts inside a kernel
// sandbox, so that what a command can touch is decided by the kernel and
// not by reading the command's text.
//
// A sandboxed command is started by bubblewrap (bwrap, the same part
// OpenAI's Codex CLI and Flatpak use) in new user, mount, PID, IPC, UTS,
// cgroup and (unless [Settings.Network] is on) network namespaces:
//
//   - the host file system is mounted read-only; only [Command.Writable]
//     (the session's working directory and tools.write_roots, in
//     workspace-write mode) and a private /tmp are writable;
//   - [Command.Hidden] (all of $TALARIA_HOME but the owner's workspace,
//     the user's credential files and directories, /etc/shadow, /run and its
//     sockets) are replaced by an empty directory or an empty file, so
//     they cannot be read, listed or connected to;
//   - [Command.ReadOnly] (the files that enter the system prompt) stay
//     read-only inside a writable root;
//   - the command sees only its own processes (its own /proc), has no
//     capabilities, cannot make user namespaces, and a seccomp filter
//     refuses the system calls a command never needs (ptrace, mount,
//     keyctl, bpf, kernel modules, ...);
//   - every process it started is killed when the command ends (the PID
//     namespace dies with its first process) or its worker exits.
//
// With the network on, the sandbox shares the host's network, and a
// Landlock ruleset applied to the thread that starts bwrap (inherited by
// everything it runs) refuses TCP connections to and binds of Talaria's
// own ports ([Settings.Ports]: the Temporal frontend, the API, the Web UI,
// metrics, the database), abstract Unix sockets outside the sandbox and
// signals to processes outside it.
//
// [Check] says whether a sandbox can be made on this machine, and why
// not; [Start] starts a command in one, refusing with an error matching
// [ErrUnavailable] when none can be made: nothing silently runs
// unconfined. [ModeOff] runs commands as they are, and is meant to be
// said at every start.
package sandbox

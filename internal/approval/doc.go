// Package approval reads the text of a shell command and says whether it
// may run without a person's approval. It is not the boundary: every
// command the model starts runs in a kernel sandbox (package sandbox), and
// this package only refines that decision, with [AssessIn]:
//
//   - inside the sandbox, only Blocked commands (the short list of
//     catastrophes below) are refused, and only what destroys work in the
//     writable roots asks (recursive deletes, git clean, reset --hard and
//     the other discards; with the network on also force pushes, SQL DROP
//     and TRUNCATE, cloud metadata); everything else is Safe, because the
//     kernel holds it;
//   - outside it (sandbox.mode: off), Safe is an allowlist: programs known
//     to only read, with their option grammars (readonly.go), and
//     redirections only to /dev/null; every other command asks (rule
//     not_read_only), talaria itself and network clients included.
//
// Its verdicts, and the human's answer, are the vocabulary of package
// turnapi (Assessment, Risk, Grants, ApprovalChoice), which workflow code
// uses without this package.
//
// [Assess] parses a command with a real shell parser (mvdan.cc/sh, bash
// dialect) and decodes every word with its expand package, without running
// anything: quotes are removed, $'...' is decoded, and parameters,
// substitutions, brace expansion and field splitting are worked out as far
// as the text itself allows. It then checks every command that would run:
// those in lists, pipelines, subshells, { } groups, if/while/for/case
// bodies, function bodies (checked where they are defined, and again with
// the arguments of each call: g() { rm "$@"; }; g -rf ~), command and
// process substitutions, and the scripts handed to other programs.
//
// Text a shell would not run as written is Dangerous (rule unparsable),
// never Safe; so is a comment that ends with a backslash before a newline,
// which the parser and bash read differently. Text nested deeper than a
// fixed limit (24 levels of substitutions and nested shells, more than 64
// stacked wrappers, 1000 nested parentheses, 64 calls of functions with
// arguments) is Dangerous (rule
// too_complex).
//
// # What runs
//
// A command word that is not a literal after quote removal and ANSI-C
// decoding — a parameter ($X, ${X:-rm}), a command or process
// substitution, arithmetic, a brace expansion ({rm,-rf,/}), an unquoted
// glob (/bin/r?) or $IFS splitting — means nobody can tell what runs: the
// command is at least Dangerous (rule dynamic_command). Its plausible
// static decodings are then checked like any command: values assigned
// earlier in the same text (X=rm; $X), defaults with the variable unset
// (${RM:-rm}), substitutions that only print literal text ($(echo rm),
// `printf rm`, $(echo cm0= | base64 -d)), brace expansion, $IFS as a
// space, and the known program names a glob matches. If one of them is
// Blocked, so is the command. Literal spellings such as "rm", r"m", \rm
// and $'\x72\x6d' are simply rm.
//
// Wrappers are looked through with their option grammars, including
// abbreviated long options (sudo --us root): sudo, doas, su/runuser -c, env
// (-i, -, -u, -C, NAME=value, -S), nohup, setsid, timeout, nice, ionice,
// stdbuf, time, command (not command -v), builtin, exec, busybox, strace,
// unshare, nsenter, systemd-run, taskset, chroot, flock (-c), script -c,
// watch, screen, pkexec, fakeroot, proot, bwrap, firejail, setpriv, sg,
// capsh --, prlimit, numactl, faketime, torsocks, proxychains, rlwrap,
// sshpass, xvfb-run, dbus-launch, ssh-agent, mpirun, valgrind, catchsegv,
// toybox, entr, start-stop-daemon, systemd-inhibit, caffeinate, runcon,
// setarch (linux64 ...), ip netns exec, terminal emulators (xterm -e,
// gnome-terminal --), sem, tsp, dtach, perf record/stat, ccache, chronic,
// ifne, run-one, sandbox-exec, flatpak-spawn, distrobox-host-exec, gdb
// --args, xargs (with literal input piped in, placed after the command or,
// for -I REPL, at any of its words), parallel (command and :::
// inputs), eval, trap, ssh HOST CMD, find -exec/-execdir/-ok/-okdir, tar
// --to-command/--checkpoint-action=exec, "sh -c" for every shell, "--"
// before a command (time -- CMD), and heredocs, here-strings and literal text piped
// into a shell or source /dev/stdin (or /dev/fd/0, /proc/self/fd/0), or fed
// to xargs; /proc/self/exe is the shell itself, and a program read from
// another descriptor (bash /dev/fd/3, bash <&3, bash -i 0>&1) is
// Dangerous, and one read from the network (bash < /dev/tcp/HOST/PORT,
// source /dev/tcp/...) is a download run by a shell, as are nc -e/-c and
// socat EXEC:/SYSTEM: (whose commands are checked as scripts). Makefile
// text given to make --eval or on its stdin (make -f -) is Dangerous and
// its recipe lines are checked as scripts; awk -f - reads its program from
// the known stdin. Names bash evaluates
// (printf -v, read, declare, local, export, unset, let, test -v, [[ -v ]])
// and arithmetic operands, including the known values of variables named in
// arithmetic, may hold array subscripts that run code ('a[$(cmd)]'): such
// text, and any value assigned that has that form, is at least Dangerous
// and the code is checked as a script.
//
// Interpreter one-liners (python -c, perl -e/-E/-M, ruby -e, node -e/-p,
// php -r, deno/bun eval, lua/luajit -e, Rscript/R -e, julia -e, pwsh -c)
// and programs fed to an interpreter on stdin are Dangerous (rule
// inline_code) when the code deletes, moves, writes, changes permissions,
// runs commands or evaluates built code, or when the code itself is built
// by the shell; shell commands they spell out as string literals
// (os.system("..."), `...`) are checked as scripts. awk programs are read
// for system(), "cmd" | getline, print | "cmd" and print > "file"; sed
// scripts for e COMMAND and s///e (the command is checked as a script, and
// is Dangerous) and w FILE (a write).
//
// Options and settings that make a program run a command are Dangerous, and
// the command is checked as a script where it is literal: gdb -ex '!cmd',
// vim -c/--cmd/+cmd, emacs --eval, man -P/-H, less +!cmd, sqlite3 .shell
// and .system (also in text piped in), sqlite3 .load and load_extension,
// psql \!, mysql system, COPY ... PROGRAM, expect -c, tmux new/split-window/run-shell CMD and
// send-keys, screen -X, rsync -e/--rsync-path (other than ssh), ssh -o
// ProxyCommand/LocalCommand, scp -S, zip -TT, git ext:: URLs, at, batch,
// crontab FILE, git config and git -c of core.pager, core.editor,
// core.sshCommand, core.hooksPath, alias.x='!cmd', filter.x.clean/smudge,
// difftool.x.cmd, merge.x.driver, *.helper, *.uploadpack, pager.* ... (and
// include.path, which loads settings from a file), hash -p, enable -f,
// and assignments (NAME=v cmd, export, env, sudo) of GIT_PAGER,
// GIT_SSH_COMMAND, GIT_EXTERNAL_DIFF, GIT_EDITOR, PAGER, MANPAGER,
// LESSOPEN, EDITOR, BASH_ENV, ENV, LD_PRELOAD, LD_LIBRARY_PATH,
// PROMPT_COMMAND, GIT_CONFIG_GLOBAL, GIT_CONFIG_VALUE_n, GIT_TEMPLATE_DIR,
// GIT_SEQUENCE_EDITOR, npm_config_script_shell, JAVA_TOOL_OPTIONS,
// RUSTC_WRAPPER, CARGO_TARGET_*_RUNNER ... (pagers and editors set to cat, less, more or vim stay
// Safe).
//
// # Rules
//
//   - Blocked: recursive deletes of /, of a home directory or of a system
//     directory (rm -r, find -delete, find -exec rm or find | xargs rm with
//     nothing narrowing the match: -name '*' and -o do not); rsync --delete
//     or tar extraction onto /, a system directory or a disk; mkfs on a
//     device; raw writes to a disk (dd of=/dev/sda, > /dev/sda, cp, tee,
//     shred or tar -cf onto a disk); fork bombs; recursive chmod, chown or
//     setfacl of /, a home or a system directory; moving away /, a home or a
//     system directory (mv ~ /tmp/x, mv -t /tmp ~); unzip -d or 7z -o onto / or a system
//     directory.
//   - Dangerous: the dynamic, unparsable and too complex commands above;
//     other recursive deletes (rm -r, find -delete, find -exec rm, rsync
//     --delete, git rm -r); git clean -f, reset --hard, checkout -f, switch
//     --discard-changes, stash drop/clear, worktree remove --force, push
//     --force, push :branch, --mirror or --delete, branch -D, reflog expire
//     and gc --prune=now; a download or decoded text run by a shell or
//     interpreter (curl | sh, bash <(curl), base64 -d | sh; a literal that
//     decodes to a Blocked command is Blocked); risky inline code; reading
//     secrets (an argument, @FILE or < FILE naming $TALARIA_HOME's files,
//     ~/.ssh/id_*, ~/.aws/credentials, ~/.netrc, /etc/shadow,
//     /proc/PID/environ ..., or a glob that may match one) and printing
//     stored credentials (git credential fill, gh auth token ...); requests
//     to cloud metadata addresses (169.254.169.254 in any inet_aton
//     spelling, metadata.google.internal ...); DROP/TRUNCATE through a SQL
//     client; and, outside the sandbox, every command not known to only
//     read (not_read_only: writes of any file, builds, interpreters,
//     network clients, sudo and other wrappers that change who or where,
//     assignments of PATH and of the variables that pick what runs).
//   - Safe: everything else.
//
// # What the parser cannot know
//
// Only the text of the command is read. A script file the command runs
// (./deploy.sh, make, npm test, python3 script.py, bash run.sh, source
// env.sh) is assessed by its name only: what the file does is not known,
// unless the same command downloaded it or wrote it by redirection or tee
// (echo 'rm -rf /' > x.sh; bash x.sh is checked as the script it wrote; a
// file written with output nobody can read is Dangerous). Variables set
// outside the command, files the command reads and the output of programs
// other than echo, printf, cat and the decoders are unknown; a shell or
// interpreter reading its program from such output (cat cmds | sh, python3
// -c ... | bash, awk ... | sh) is Dangerous, since it runs code nobody
// read. A path built from an unknown variable ("$DIR"/*) is taken as
// relative to an unknown place, and a command word built from one is
// Dangerous. Quoted text is data: echo "rm -rf /" is Safe.
//
// The directory a command runs in is followed through cd (with CDPATH and
// $HOME when the text sets them, and symbolic links it made with ln -s),
// pushd, env -C, sudo -D and git -C: paths that are deleted or written are
// resolved against it, a home stays a home (cd "$HOME", cd /home/NAME, cd
// /root) and a directory the text does not fix (cd "$D", cd -, cd ~+) is an
// unknown place, never the working directory. A cd in a subshell,
// substitution, pipeline stage or child shell does not move the commands
// after it; one in eval does. After commands that may not all run (&&, ||,
// if, case, loops), the most dangerous directory the shell may be in is
// assumed: cd / && cd x; rm -rf * is Blocked, since cd x may fail.
//
// Reading a system path is Safe (cat /etc/hosts); naming a secret file, or
// a whole directory of them (~/.ssh, ~/.aws, $TALARIA_HOME ...), as an
// argument or input is Dangerous whatever the program, except for programs
// that only look at paths (ls, stat, find, git, chmod ...; not git diff
// --no-index or git send-email). tar -C DIR NAME reads DIR/NAME. A program that
// opens a secret file it does not name is not seen. Prefixing a simple
// command with sudo never lowers its risk.
//
// # Grants
//
// A Dangerous assessment carries a Pattern: the normalised commands it is
// about, with their program and dangerous arguments ("rm -rf ./build":
// option clusters merged, paths cleaned, harmless flags dropped), several
// joined by " ; ", each starting with where it runs when that is not the
// working directory or user ("cd /tmp/w && ", "sudo ", "ssh host: ", "git
// -C ~ ", and for xargs reading a pipe, what feeds it). Session and always
// approvals in [turnapi.Grants] remember its [turnapi.Assessment.GrantKey], "cmd:" and the
// pattern, so a grant for rm -rf ./build covers rm -fr build/ but never rm
// -rf ./src or find / -delete. Grants written by older versions hold rule
// ids; they stay readable and still match recorded assessments that have no
// pattern, which keeps replaying old histories deterministic, but they do
// not cover new assessments.
//
// Every function is pure and deterministic, so it may be called from
// workflow code. Assess never panics and runs in time roughly linear in
// the length of the command.
package approval

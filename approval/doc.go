// Package approval decides which shell commands of the terminal tool need
// a human's approval and which are refused outright, and models the
// human's answer.
//
// [Assess] parses a command the way a POSIX shell would (quotes, escapes,
// ; && || | & and newlines, $(...), `...`, <(...), heredocs and
// redirections) without expanding anything, looks through wrappers (sudo,
// doas, env, nohup, time, command, builtin, exec, nice, timeout, xargs,
// eval, "bash -c", "env -S") and checks every simple command, including
// the scripts handed to nested shells, against a fixed list of rules. Each
// rule has a stable id (the Rule* constants) that keys session and always
// approvals in [Grants].
//
//   - Blocked: recursive deletes of /, of a home directory or of a system
//     directory; mkfs on a device; raw writes to a disk (dd of=/dev/sda,
//     > /dev/sda, cp or tee onto a disk); fork bombs; recursive chmod or
//     chown of / or a system directory.
//   - Dangerous: other recursive deletes (rm -r, find -delete, find -exec
//     rm), git clean -f / reset --hard / push --force, a download run by a
//     shell or interpreter (curl | sh, bash <(curl), sh -c "$(curl)"),
//     writes, in-place edits, copies, moves and permission changes in
//     system paths (/etc, /usr, /bin, /sbin, /lib*, /boot, /sys, /proc,
//     /var/lib, /opt), chmod -R 777, shutdown and reboot, stopping system
//     services, killing all processes, removing packages, DROP/TRUNCATE
//     through a SQL client, crontab -r, history -c, disk tools, flushing
//     the firewall, and overwriting login, SSH and credential files in a
//     home directory.
//   - Safe: everything else.
//
// Decisions worth knowing:
//   - Quoted text is data: echo "rm -rf /" is Safe, while bash -c "rm -rf /",
//     eval, heredocs and here-strings fed to a shell, and echo '...' | sh
//     are checked as the scripts they are.
//   - Only downloads piped into a shell are Dangerous: cat x | sh runs a
//     local file and is Safe, as is curl URL | python -c '...' (the
//     interpreter runs inline code and reads the download as data).
//     Downloading to a file and running it in a later command is not
//     detected.
//   - Reading a system path is Safe (cat /etc/hosts); relative paths and
//     /tmp are never system paths. Paths are cleaned, so /tmp/../etc is
//     /etc; variables other than $HOME are not expanded.
//   - Appending (>>) to ~/.bashrc is Safe (it is how tools extend PATH);
//     appending to ~/.ssh/* is not.
//   - Prefixing a command with sudo never lowers its risk.
//   - Text nested deeper than a fixed limit (24 levels of substitutions
//     and nested shells) is reported as Dangerous (rule too_complex)
//     instead of being parsed.
//
// Every function is pure and deterministic, so it may be called from
// workflow code. Assess never panics and runs in time roughly linear in
// the length of the command.
package approval

package tools

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// terminalArgs is a terminal call's arguments, decoded once, strictly.
type terminalArgs struct {
	command string
	workdir string // as written; "" when absent or blank
	timeout int    // seconds, defaulted and capped
	// outside asks to run the command outside the sandbox, for reason:
	// it runs only when a person approves it.
	outside bool
	reason  string
}

// decodeTerminal is the one reading of a terminal call's arguments, shared
// by the tool and by approval (TerminalCommand, TerminalCall).
func decodeTerminal(raw json.RawMessage) (terminalArgs, error) {
	a, err := parseArgs("terminal", raw)
	if err != nil {
		return terminalArgs{}, err
	}
	// A known argument spelt in another case ("WORKDIR") is refused rather
	// than ignored: it would run somewhere the model did not ask for.
	for name := range a.fields {
		for _, known := range []string{"command", "workdir", "timeout", "outside_sandbox", "reason"} {
			if name != known && strings.EqualFold(name, known) {
				return terminalArgs{}, a.errorf("unknown argument %q; did you mean %q?", name, known)
			}
		}
	}
	command, err := a.requiredStr("command")
	if err != nil {
		return terminalArgs{}, err
	}
	if strings.TrimSpace(command) == "" {
		return terminalArgs{}, a.errorf(`"command" must not be empty`)
	}
	workdir, _, err := a.str("workdir")
	if err != nil {
		return terminalArgs{}, err
	}
	if strings.TrimSpace(workdir) == "" {
		workdir = ""
	}
	timeout, ok, err := a.integer("timeout")
	if err != nil {
		return terminalArgs{}, err
	}
	if !ok || timeout == 0 {
		timeout = TerminalDefaultTimeout
	}
	if timeout < 0 {
		return terminalArgs{}, a.errorf(`"timeout" must be a positive number of seconds, got %d`, timeout)
	}
	outside, _, err := a.boolean("outside_sandbox")
	if err != nil {
		return terminalArgs{}, err
	}
	reason, _, err := a.str("reason")
	if err != nil {
		return terminalArgs{}, err
	}
	reason = strings.Join(strings.Fields(reason), " ")
	if outside && reason == "" {
		return terminalArgs{}, a.errorf(`"outside_sandbox" needs a "reason": say why the command cannot run in the sandbox`)
	}
	return terminalArgs{command: command, workdir: workdir, timeout: min(timeout, TerminalMaxTimeout), outside: outside, reason: reason}, nil
}

// TerminalEscalation reports whether a terminal call's arguments ask to
// run its command outside the sandbox, and why.
func TerminalEscalation(args string) (reason string, outside bool) {
	t, err := decodeTerminal(json.RawMessage(args))
	if err != nil || !t.outside {
		return "", false
	}
	return t.reason, true
}

// TerminalCall reads a terminal call's command and workdir exactly as the
// terminal tool does; workdir is "" when absent or blank. ok is false when
// the arguments are invalid, and the tool then refuses them too.
func TerminalCall(args string) (command, workdir string, ok bool) {
	t, err := decodeTerminal(json.RawMessage(args))
	if err != nil {
		return "", "", false
	}
	return t.command, t.workdir, true
}

// TerminalAssessText is the text approval should assess for a terminal
// call: the command itself when workdir is empty or ".", else
// "cd 'WORKDIR' && COMMAND", WORKDIR being workdir with a leading "~"
// expanded to $HOME, single-quoted for a POSIX shell. Pure but for $HOME.
func TerminalAssessText(command, workdir string) string {
	if strings.TrimSpace(workdir) == "" || workdir == "." {
		return command
	}
	if workdir == "~" || strings.HasPrefix(workdir, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			workdir = home + strings.TrimPrefix(workdir, "~")
		}
	}
	return "cd " + shellQuote(workdir) + " && " + command
}

// shellQuote single-quotes s for a POSIX shell.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// terminalDir resolves and checks the directory a terminal command runs
// in: the working directory, or workdir, which must resolve (symlinks
// included) to a directory under the working directory or a write root and
// not into a protected place. The error is the one-line refusal the model
// reads; nothing runs.
func (e Env) terminalDir(workdir string) (string, error) {
	dir, err := e.resolvePath(".")
	if err != nil {
		return "", fmt.Errorf("terminal: %w", err)
	}
	if workdir != "" && workdir != "." {
		abs, real, err := e.resolveReal(workdir)
		if err != nil {
			return "", fmt.Errorf("terminal: %w", err)
		}
		roots, wd, err := e.writeRoots()
		if err != nil {
			return "", fmt.Errorf("terminal: %w", err)
		}
		if _, ok := rootOf(real, roots); !ok {
			return "", refuse(ErrOutsideRoots, "terminal: workdir %s is outside the working directory %s and tools.write_roots; nothing was run",
				describe(abs, real), wd)
		}
		// A directory whose every new file is protected (~/.ssh, a .git
		// directory's hooks) is refused like the directory itself.
		extra := resolvedRoots(e.Policy.WriteRoots)
		for _, p := range []string{real, filepath.Join(real, "x")} {
			if why, bad := e.Policy.writeProtected(p, extra); bad {
				return "", refuse(ErrProtectedPath, "terminal: workdir %s is %s; nothing was run", describe(abs, real), why)
			}
		}
		dir = real
	}
	if info, err := os.Stat(dir); err != nil {
		return "", fmt.Errorf("terminal: workdir %s: %w", dir, err)
	} else if !info.IsDir() {
		return "", fmt.Errorf("terminal: workdir %s is not a directory", dir)
	}
	return dir, nil
}

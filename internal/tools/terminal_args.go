package tools

import (
	"cmp"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// terminalArgs are the terminal's arguments.
type terminalArgs struct {
	Command string `json:"command" jsonschema:"The shell command to run, e.g. \"go test ./...\" or \"ls -la src\"."`
	Timeout int    `json:"timeout,omitempty" jsonschema:"Seconds before the command is killed. Default 180, at most 3600."`
	Workdir string `json:"workdir,omitempty" jsonschema:"Directory to run the command in, absolute or relative to the working directory; it must lie under the working directory or a configured write root. Default: the working directory."`
	// OutsideSandbox asks to run the command outside the sandbox, for
	// Reason: it runs only when a person approves it.
	OutsideSandbox bool   `json:"outside_sandbox,omitempty" jsonschema:"Ask a person to let this command run outside the sandbox; only after it failed because of the sandbox. Needs a reason."`
	Reason         string `json:"reason,omitempty" jsonschema:"With outside_sandbox: why the command cannot run in the sandbox."`
}

// normalize checks a and fills in its defaults: a blank workdir is "",
// the timeout defaulted and capped, the reason on one line.
func (a *terminalArgs) normalize() error {
	if strings.TrimSpace(a.Command) == "" {
		return invalidArgs("terminal", `"command" must not be empty`)
	}
	if strings.TrimSpace(a.Workdir) == "" {
		a.Workdir = ""
	}
	if a.Timeout < 0 {
		return invalidArgs("terminal", `"timeout" must be a positive number of seconds, got %d`, a.Timeout)
	}
	a.Timeout = min(cmp.Or(a.Timeout, TerminalDefaultTimeout), TerminalMaxTimeout)
	if a.Reason = strings.Join(strings.Fields(a.Reason), " "); a.OutsideSandbox && a.Reason == "" {
		return invalidArgs("terminal", `"outside_sandbox" needs a "reason": say why the command cannot run in the sandbox`)
	}
	return nil
}

// decodeTerminal is the one reading of a terminal call's arguments, shared
// by the tool and by approval (TerminalCommand, TerminalCall).
func decodeTerminal(raw json.RawMessage) (terminalArgs, error) {
	a, err := Terminal.(*typed[terminalArgs]).decode(raw)
	if err != nil {
		return a, err
	}
	return a, a.normalize()
}

// TerminalEscalation reports whether a terminal call's arguments ask to
// run its command outside the sandbox, and why.
func TerminalEscalation(args string) (reason string, outside bool) {
	t, err := decodeTerminal(json.RawMessage(args))
	if err != nil || !t.OutsideSandbox {
		return "", false
	}
	return t.Reason, true
}

// TerminalCall reads a terminal call's command and workdir exactly as the
// terminal tool does; workdir is "" when absent or blank. ok is false when
// the arguments are invalid, and the tool then refuses them too.
func TerminalCall(args string) (command, workdir string, ok bool) {
	t, err := decodeTerminal(json.RawMessage(args))
	if err != nil {
		return "", "", false
	}
	return t.Command, t.Workdir, true
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

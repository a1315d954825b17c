package approval

import "strings"

// sedScripts are the scripts of a sed command: its -e values, or its first
// operand.
func sedScripts(args []string) []string {
	p := sedOpts.parse(args)
	if p.has("--sandbox") {
		return nil // e, w and r are refused
	}
	scripts := append(p.values["-e"], p.values["--expression"]...)
	if !p.has("-e", "--expression", "-f", "--file") && len(p.operands) > 0 {
		scripts = append(scripts, p.operands[0])
	}
	return scripts
}

// sedRuns checks the commands a sed script runs (e COMMAND, s///e) and the
// files it writes (w FILE, W FILE, s///w FILE).
func (a *assessor) sedRuns(c *cmd) {
	for _, s := range sedScripts(c.args) {
		for _, r := range sedParse(s) {
			switch r.kind {
			case 'e':
				a.danger(c, RuleInlineCode, "sed runs a command (e)")
				if r.text != "" {
					a.shellText(c.call, r.text)
				}
			case 'w':
				a.writeTarget(c.sc.resolve(r.text), c.name+" w", c.pattern(), false)
				a.writeCheck(c.sc.resolve(r.text), c.pattern())
			}
		}
	}
}

// sedAction is a command of a sed script that runs (kind 'e', text the
// command, or the replacement of s///e) or writes (kind 'w', text the
// file).
type sedAction struct {
	kind byte
	text string
}

// sedParse finds the e and w actions of a sed script, reading its
// commands the way GNU sed does.
func sedParse(s string) []sedAction {
	var out []sedAction
	i := 0
	restOfLine := func() string {
		j := strings.IndexByte(s[i:], '\n')
		if j < 0 {
			j = len(s) - i
		}
		t := s[i : i+j]
		i += j
		return strings.TrimSpace(t)
	}
	// part reads text up to an unescaped delimiter.
	part := func(d byte) string {
		var b strings.Builder
		for i < len(s) && s[i] != d {
			if s[i] == '\\' && i+1 < len(s) {
				if s[i+1] != d {
					b.WriteByte('\\')
				}
				i++
			}
			b.WriteByte(s[i])
			i++
		}
		i++
		return b.String()
	}
	for i < len(s) {
		// Addresses: numbers, $, /regex/, \cregexc, ranges, steps, !.
		for i < len(s) {
			ch := s[i]
			switch {
			case ch == ' ' || ch == '\t' || ch == ';' || ch == '\n' || ch == '{' || ch == '}' || ch == '!' ||
				ch == ',' || ch == '~' || ch == '+' || ch == '$' || (ch >= '0' && ch <= '9'):
				i++
				continue
			case ch == '/':
				i++
				part('/')
				for i < len(s) && (s[i] == 'I' || s[i] == 'M') {
					i++
				}
				continue
			case ch == '\\' && i+1 < len(s):
				i += 2
				part(s[i-1])
				continue
			}
			break
		}
		if i >= len(s) {
			break
		}
		cmd := s[i]
		i++
		switch cmd {
		case 'e':
			out = append(out, sedAction{'e', restOfLine()})
		case 'w', 'W':
			out = append(out, sedAction{'w', restOfLine()})
		case 'r', 'R', 'a', 'i', 'c', ':', 'b', 't', 'T', 'q', 'Q', 'l', 'L':
			if cmd == ':' || cmd == 'b' || cmd == 't' || cmd == 'T' {
				for i < len(s) && s[i] != ';' && s[i] != '\n' {
					i++
				}
			} else if cmd != 'q' && cmd != 'Q' && cmd != 'l' && cmd != 'L' {
				restOfLine()
			}
		case 's', 'y':
			if i >= len(s) {
				break
			}
			d := s[i]
			i++
			part(d)
			repl := part(d)
			if cmd == 'y' {
				break
			}
			for i < len(s) && strings.IndexByte("gpiImMe0123456789", s[i]) >= 0 {
				if s[i] == 'e' {
					out = append(out, sedAction{'e', repl})
				}
				i++
			}
			if i < len(s) && s[i] == 'w' {
				i++
				out = append(out, sedAction{'w', restOfLine()})
			}
		}
	}
	return out
}

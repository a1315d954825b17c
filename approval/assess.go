package approval

import "strings"

// Assess classifies a shell command. It parses the command the way a POSIX
// shell would (quotes, escapes, ; && || | & and newlines, $(...), `...`,
// <(...), heredocs and redirections), looks through wrappers such as sudo,
// env, nohup, time, xargs and "bash -c", and checks every simple command,
// including the scripts handed to nested shells. Blocked wins over
// Dangerous; among findings of the strongest risk the first one, in the
// order the text is read, is reported.
func Assess(command string) Assessment {
	as := &assessor{}
	as.text(command, 0)
	if as.tooDeep {
		as.report(Dangerous, RuleTooComplex, "command nests shells or substitutions too deeply to check")
	}
	return as.best
}

// assessor accumulates the strongest finding of one Assess call.
type assessor struct {
	best    Assessment
	tooDeep bool
}

// report records a finding unless an equal or stronger one came first.
func (as *assessor) report(r Risk, rule, reason string) {
	if r > as.best.Risk {
		as.best = Assessment{Risk: r, Rule: rule, Reason: reason}
	}
}

// cmdInfo describes a simple command once its wrappers are removed.
type cmdInfo struct {
	name       string
	args       []string
	downloader bool // prints a download on its output (curl, wget ...)
	readsStdin bool // a shell or interpreter that runs the code on its stdin
	shell      bool
}

// text parses and checks shell text; it reports whether the text runs a
// downloader anywhere.
func (as *assessor) text(src string, depth int) bool {
	return as.script(parseScript(src, depth, &as.tooDeep), depth)
}

func (as *assessor) script(s *script, depth int) bool {
	if hasForkBomb(s.skeleton) {
		as.report(Blocked, RuleForkBomb, "fork bomb (a function that pipes into itself)")
	}
	downloads := false
	for _, p := range s.pipelines {
		if as.pipeline(p, depth) {
			downloads = true
		}
	}
	return downloads
}

func (as *assessor) pipeline(p []*command, depth int) bool {
	infos := make([]cmdInfo, len(p))
	downloads := false
	for i, c := range p {
		var subs bool
		infos[i], subs = as.command(c, depth)
		if subs || infos[i].downloader {
			downloads = true
		}
	}
	for i := range infos {
		if !infos[i].downloader {
			continue
		}
		for j := i + 1; j < len(infos); j++ {
			if infos[j].readsStdin {
				as.report(Dangerous, RuleCurlPipeShell, "runs a downloaded script ("+infos[i].name+" | "+infos[j].name+")")
			}
		}
	}
	// Text piped into a shell is run: echo 'cmd' | sh, cat <<EOF | sh.
	// Each text is checked once however many shells follow, and a shell's
	// own heredoc was checked with the shell.
	last := -1
	for j, in := range infos {
		if in.shell && in.readsStdin {
			last = j
		}
	}
	for i := 0; i < last; i++ {
		if infos[i].shell && infos[i].readsStdin {
			continue
		}
		if infos[i].name == "echo" || infos[i].name == "printf" {
			as.text(strings.Join(echoText(infos[i].args), " "), depth+1)
		}
		for _, body := range p[i].stdin {
			as.text(body, depth+1)
		}
	}
	as.sqlPipeline(p, infos)
	return downloads
}

// echoText drops echo's leading options.
func echoText(args []string) []string {
	for len(args) > 0 && (args[0] == "-n" || args[0] == "-e" || args[0] == "-E" || args[0] == "-ne" || args[0] == "-en") {
		args = args[1:]
	}
	return args
}

// command checks one simple command: its redirections, its substitutions,
// then the command itself. subs reports a downloader inside a substitution.
func (as *assessor) command(c *command, depth int) (info cmdInfo, subs bool) {
	for _, r := range c.redirs {
		as.redirect(r)
	}
	for _, s := range c.subs {
		if as.script(s, depth+1) {
			subs = true
		}
	}
	info = as.words(c.words, depth, subs)
	if info.shell && info.readsStdin {
		for _, body := range c.stdin {
			as.text(body, depth+1)
		}
	}
	return info, subs
}

func (as *assessor) redirect(r redirect) {
	if r.op == "<" {
		return
	}
	t := r.target
	switch {
	case isDisk(t):
		as.report(Blocked, RuleDiskRedirect, "redirects output onto a disk device ("+r.op+" "+short(t)+")")
	case isSystemPath(t):
		as.report(Dangerous, RuleSystemWrite, "writes to a system path ("+r.op+" "+short(t)+")")
	case isHomeConfig(t, r.op == ">>" || r.op == "&>>" || r.op == "<>"):
		as.report(Dangerous, RuleDotfileWrite, "overwrites a login or SSH file in the home directory ("+r.op+" "+short(t)+")")
	}
}

// short shortens text quoted in a Reason to one line of at most 60 bytes.
func short(s string) string {
	s = strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f {
			return ' '
		}
		return r
	}, s)
	if len(s) <= 60 {
		return s
	}
	cut := 60
	for cut > 0 && s[cut]&0xC0 == 0x80 { // do not split a UTF-8 sequence
		cut--
	}
	return s[:cut] + "…"
}

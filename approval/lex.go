package approval

import "strings"

// maxDepth bounds the nesting of command substitutions and of scripts
// handed to shells (bash -c, eval, heredocs). Deeper text is not parsed and
// the command is reported as RuleTooComplex.
const maxDepth = 24

// script is one level of parsed shell text: pipelines of simple commands.
type script struct {
	pipelines [][]*command
	// skeleton is the text as the shell sees it with quoted characters
	// replaced by '_', used to look for function definitions.
	skeleton string
}

// substituted stands in a word for the output of a command or process
// substitution. The substitution itself is parsed into command.subs and
// checked once; keeping its source text out of the word means a script
// handed to "sh -c" or eval does not check it a second time, which would
// make nested substitutions cost exponential time.
const substituted = "$SUBSTITUTION"

// command is one simple command after quote removal. Nothing is expanded:
// $VAR stays as written and substitutions become substituted.
type command struct {
	words  []string
	redirs []redirect
	// subs are the command and process substitutions in the words,
	// redirect targets and expanding heredocs, parsed.
	subs []*script
	// stdin holds heredoc bodies and here-strings fed to the command.
	stdin []string
}

func (c *command) empty() bool {
	return len(c.words) == 0 && len(c.redirs) == 0 && len(c.subs) == 0 && len(c.stdin) == 0
}

// redirect is an output or input redirection with a file target.
type redirect struct {
	op     string // ">", ">>", ">|", "&>", "&>>", "<", "<>"
	target string
}

// heredoc is a << redirection whose body follows the next newline.
type heredoc struct {
	cmd    *command
	delim  string
	strip  bool // <<- strips leading tabs
	expand bool // unquoted delimiter: substitutions in the body run
}

// lexer reads shell text. It never fails: unterminated quotes and
// substitutions end at the end of the text.
type lexer struct {
	src     string
	pos     int
	depth   int
	tooDeep *bool
}

func parseScript(src string, depth int, tooDeep *bool) *script {
	if depth > maxDepth {
		*tooDeep = true
		return &script{}
	}
	lx := &lexer{src: src, depth: depth, tooDeep: tooDeep}
	return lx.parse(false)
}

func (lx *lexer) peek(off int) byte {
	if lx.pos+off < len(lx.src) {
		return lx.src[lx.pos+off]
	}
	return 0
}

// parse reads commands until the end of the text or, when stop is set,
// until the ')' closing a $( substitution, which it consumes.
func (lx *lexer) parse(stop bool) *script {
	s := &script{}
	var sk strings.Builder
	var pipe []*command
	var pending []heredoc
	cur := &command{}
	parens := 0
	endCommand := func() {
		if !cur.empty() {
			pipe = append(pipe, cur)
		}
		cur = &command{}
	}
	endPipeline := func() {
		endCommand()
		if len(pipe) > 0 {
			s.pipelines = append(s.pipelines, pipe)
		}
		pipe = nil
	}
	for lx.pos < len(lx.src) {
		c := lx.src[lx.pos]
		switch {
		case c == ' ' || c == '\t' || c == '\r':
			sk.WriteByte(c)
			lx.pos++
		case c == '\\' && lx.peek(1) == '\n':
			lx.pos += 2
		case c == '\n':
			sk.WriteByte(c)
			lx.pos++
			endPipeline()
			lx.readHeredocs(pending)
			pending = nil
		case c == '#':
			for lx.pos < len(lx.src) && lx.src[lx.pos] != '\n' {
				lx.pos++
			}
		case c == '&' && lx.peek(1) == '>':
			lx.redirect(cur, &pending, &sk)
		case c == ';' || c == '&':
			n := 1
			if lx.peek(1) == c {
				n = 2
			}
			sk.WriteString(lx.src[lx.pos : lx.pos+n])
			lx.pos += n
			endPipeline()
		case c == '|':
			sk.WriteByte(c)
			if lx.peek(1) == '|' {
				sk.WriteByte('|')
				lx.pos += 2
				endPipeline()
				continue
			}
			lx.pos++
			if lx.peek(0) == '&' {
				lx.pos++
			}
			endCommand()
		case c == '(':
			sk.WriteByte(c)
			lx.pos++
			parens++
			endPipeline()
		case c == ')':
			lx.pos++
			if parens == 0 && stop {
				endPipeline()
				s.skeleton = sk.String()
				return s
			}
			sk.WriteByte(c)
			if parens > 0 {
				parens--
			}
			endPipeline()
		case (c == '<' || c == '>') && lx.peek(1) != '(':
			lx.redirect(cur, &pending, &sk)
		default:
			start := lx.pos
			w, quoted := lx.word(cur, &sk)
			if !quoted && isDigits(w) && (lx.peek(0) == '<' || lx.peek(0) == '>') && lx.peek(1) != '(' {
				continue // a file descriptor number: the redirect follows
			}
			if lx.pos == start { // cannot happen, but never loop forever
				lx.pos++
				continue
			}
			cur.words = append(cur.words, w)
		}
	}
	endPipeline()
	s.skeleton = sk.String()
	return s
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// redirectOps are the redirection operators, longest first.
var redirectOps = []string{"&>>", "&>", "<<<", "<<-", "<<", "<>", "<&", ">>", ">|", ">&", "<", ">"}

func (lx *lexer) redirect(cur *command, pending *[]heredoc, sk *strings.Builder) {
	op := ""
	for _, o := range redirectOps {
		if strings.HasPrefix(lx.src[lx.pos:], o) {
			op = o
			break
		}
	}
	if op == "" { // not reached: callers check the first byte
		lx.pos++
		return
	}
	sk.WriteString(op)
	lx.pos += len(op)
	for lx.pos < len(lx.src) && (lx.src[lx.pos] == ' ' || lx.src[lx.pos] == '\t') {
		sk.WriteByte(lx.src[lx.pos])
		lx.pos++
	}
	target, quoted := lx.word(cur, sk)
	switch op {
	case "<<", "<<-":
		*pending = append(*pending, heredoc{cmd: cur, delim: target, strip: op == "<<-", expand: !quoted})
	case "<<<":
		cur.stdin = append(cur.stdin, target)
	case "<&":
		// duplicating an input descriptor reads nothing new
	case ">&":
		if target != "" && target != "-" && !isDigits(target) {
			cur.redirs = append(cur.redirs, redirect{op: "&>", target: target})
		}
	default:
		cur.redirs = append(cur.redirs, redirect{op: op, target: target})
	}
}

// readHeredocs reads the bodies of the heredocs opened on the line just
// ended, each up to its delimiter line.
func (lx *lexer) readHeredocs(pending []heredoc) {
	for _, h := range pending {
		var body strings.Builder
		for lx.pos < len(lx.src) {
			end := strings.IndexByte(lx.src[lx.pos:], '\n')
			var line string
			if end < 0 {
				line = lx.src[lx.pos:]
				lx.pos = len(lx.src)
			} else {
				line = lx.src[lx.pos : lx.pos+end]
				lx.pos += end + 1
			}
			if h.strip {
				line = strings.TrimLeft(line, "\t")
			}
			if line == h.delim {
				break
			}
			body.WriteString(line)
			body.WriteByte('\n')
		}
		text := body.String()
		if h.expand {
			sub := &lexer{src: text, depth: lx.depth, tooDeep: lx.tooDeep}
			var b, sk strings.Builder
			sub.quoted(h.cmd, &b, &sk, false)
			text = b.String()
		}
		h.cmd.stdin = append(h.cmd.stdin, text)
	}
}

// word reads one word at the current position, removing quotes and parsing
// substitutions into cur.subs. quoted reports whether any part was quoted.
func (lx *lexer) word(cur *command, sk *strings.Builder) (string, bool) {
	var b strings.Builder
	quoted := false
	for lx.pos < len(lx.src) {
		c := lx.src[lx.pos]
		switch c {
		case ' ', '\t', '\r', '\n', ';', '&', '|', '(', ')':
			return b.String(), quoted
		case '<', '>':
			if lx.peek(1) != '(' {
				return b.String(), quoted
			}
			lx.pos += 2
			lx.substitution(cur)
			b.WriteString(substituted)
			sk.WriteString("_")
		case '\\':
			quoted = true
			switch {
			case lx.peek(1) == '\n':
				lx.pos += 2
			case lx.pos+1 < len(lx.src):
				b.WriteByte(lx.src[lx.pos+1])
				sk.WriteByte('_')
				lx.pos += 2
			default:
				lx.pos++
			}
		case '\'':
			quoted = true
			end := strings.IndexByte(lx.src[lx.pos+1:], '\'')
			if end < 0 {
				b.WriteString(lx.src[lx.pos+1:])
				lx.pos = len(lx.src)
			} else {
				b.WriteString(lx.src[lx.pos+1 : lx.pos+1+end])
				lx.pos += end + 2
			}
			sk.WriteByte('_')
		case '"':
			quoted = true
			lx.pos++
			lx.quoted(cur, &b, sk, true)
			sk.WriteByte('_')
		case '`':
			lx.backtick(cur)
			b.WriteString(substituted)
			sk.WriteByte('_')
		case '$':
			switch lx.peek(1) {
			case '(':
				lx.pos += 2
				lx.substitution(cur)
				b.WriteString(substituted)
				sk.WriteByte('_')
			case '\'':
				quoted = true
				lx.pos += 2
				lx.ansiC(&b)
				sk.WriteByte('_')
			default:
				b.WriteByte(c)
				sk.WriteByte(c)
				lx.pos++
			}
		default:
			b.WriteByte(c)
			sk.WriteByte(c)
			lx.pos++
		}
	}
	return b.String(), quoted
}

// quoted reads the inside of a double-quoted string (or, with terminated
// unset, a whole expanding heredoc body) up to the closing quote.
func (lx *lexer) quoted(cur *command, b, sk *strings.Builder, terminated bool) {
	for lx.pos < len(lx.src) {
		c := lx.src[lx.pos]
		switch {
		case c == '"' && terminated:
			lx.pos++
			return
		case c == '\\' && lx.pos+1 < len(lx.src):
			n := lx.src[lx.pos+1]
			switch {
			case n == '\n':
			case n == '$' || n == '`' || n == '"' || n == '\\':
				b.WriteByte(n)
			default:
				b.WriteByte(c)
				b.WriteByte(n)
			}
			lx.pos += 2
		case c == '`':
			lx.backtick(cur)
			b.WriteString(substituted)
		case c == '$' && lx.peek(1) == '(':
			lx.pos += 2
			lx.substitution(cur)
			b.WriteString(substituted)
		default:
			b.WriteByte(c)
			lx.pos++
		}
	}
}

// substitution parses the script of a $( or <( or >( whose opening has
// been consumed, through its closing ')'.
func (lx *lexer) substitution(cur *command) {
	if lx.depth >= maxDepth {
		*lx.tooDeep = true
		lx.pos = len(lx.src)
		return
	}
	lx.depth++
	cur.subs = append(cur.subs, lx.parse(true))
	lx.depth--
}

// backtick parses a `...` substitution starting at the opening backquote.
func (lx *lexer) backtick(cur *command) {
	lx.pos++
	var inner strings.Builder
	for lx.pos < len(lx.src) {
		c := lx.src[lx.pos]
		if c == '`' {
			lx.pos++
			break
		}
		if c == '\\' && lx.pos+1 < len(lx.src) {
			n := lx.src[lx.pos+1]
			if n == '`' || n == '\\' || n == '$' {
				inner.WriteByte(n)
				lx.pos += 2
				continue
			}
		}
		inner.WriteByte(c)
		lx.pos++
	}
	cur.subs = append(cur.subs, parseScript(inner.String(), lx.depth+1, lx.tooDeep))
}

// ansiC reads the inside of a $'...' string, decoding the common escapes.
func (lx *lexer) ansiC(b *strings.Builder) {
	for lx.pos < len(lx.src) {
		c := lx.src[lx.pos]
		if c == '\'' {
			lx.pos++
			return
		}
		if c == '\\' && lx.pos+1 < len(lx.src) {
			switch n := lx.src[lx.pos+1]; n {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			default:
				b.WriteByte(n)
			}
			lx.pos += 2
			continue
		}
		b.WriteByte(c)
		lx.pos++
	}
}

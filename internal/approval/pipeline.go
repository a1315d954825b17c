package approval

import (
	"encoding/base64"
	"encoding/hex"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"

	"github.com/talaria-agent/talaria/internal/turnapi"
)

// pipeline checks each stage, then what flows between them: a download,
// or decoded text, into a shell or interpreter; literal text into a shell
// (echo 'cmd' | sh) is checked as the script it is.
func (a *assessor) pipeline(s *syntax.Stmt, sc *scope, depth int) bool {
	b := s.Cmd.(*syntax.BinaryCmd)
	var stages []*syntax.Stmt
	flattenPipe(b.X, &stages)
	flattenPipe(b.Y, &stages)
	infos := make([]cmdInfo, len(stages))
	downloads := false
	cwd := sc.cwd
	defer func() { sc.cwd = cwd }() // every stage runs in a subshell
	for i, st := range stages {
		if ce, ok := st.Cmd.(*syntax.CallExpr); ok {
			saved := a.ctx
			if i > 0 && len(ce.Args) > 0 && printNode(ce.Args[0]) == "xargs" {
				// What xargs runs depends on what it reads: the
				// pattern names the producer.
				a.ctx += rawPattern(printNode(stages[i-1])) + " | "
			}
			infos[i] = a.callStmt(st, ce, sc, depth)
			a.ctx = saved
		} else {
			infos[i].subsDownload = a.stmt(st, sc, depth)
		}
		downloads = downloads || infos[i].downloader || infos[i].subsDownload
	}
	d := decoder{a: a, sc: sc, depth: depth}
	out, known := "", false
	dl, dec := -1, -1 // the last downloader and decoder
	saved := a.ctx
	if w := sc.where(); !strings.Contains(a.ctx, w) {
		a.ctx += w
	}
	defer func() { a.ctx = saved }()
	for j, in := range infos {
		if dl >= 0 && in.readsStdin {
			a.feeds(stages, infos, dl, j)
		}
		if dec >= 0 && in.readsStdin {
			a.feeds(stages, infos, dec, j)
		}
		if in.downloader {
			dl = j
		}
		if in.decoder {
			dec = j
		}
		if j > 0 && in.readsStdin {
			if known {
				a.knownInput(in, out, sc, depth)
			} else {
				a.report(turnapi.RiskDangerous, RuleDynamicCommand, "runs a program nobody can read from the output of "+short(infos[j-1].name)+" ("+in.name+" reads stdin)",
					rawPattern(printNode(stages[j-1]))+" | "+rawPattern(printNode(stages[j])))
			}
		}
		if j > 0 && in.lang == "sql" && known {
			a.sqlInput(in.name, out)
			a.sqlShell(&cmd{call: call{sc: sc, depth: depth, stdin: out, hasStdin: true}, name: in.name})
		}
		if j > 0 && in.xargs != nil && known {
			a.xargsInput(stages[j], in.xargs, out, sc, depth)
		}
		if j > 0 && in.xargs != nil && !known {
			a.findXargs(stages[j-1], in, sc, depth)
		}
		if j > 0 && !known {
			if name := parallelCommand(stages[j], sc); name != "" {
				a.findXargs(stages[j-1], cmdInfo{name: name}, sc, depth)
			}
		}
		if j > 0 {
			a.teeWrites(stages[j], out, known, sc, depth)
		}
		out, known = d.stageOutput(stages[j], out, known && j > 0)
	}
	return downloads
}

// feeds reports a download or decoder (stage i) earlier in the pipeline
// than a shell or interpreter that runs its stdin (stage j).
func (a *assessor) feeds(stages []*syntax.Stmt, infos []cmdInfo, i, j int) {
	pat := rawPattern(printNode(stages[i])) + " | " + rawPattern(printNode(stages[j]))
	if infos[i].downloader {
		a.report(turnapi.RiskDangerous, RuleCurlPipeShell, "runs a downloaded script ("+infos[i].name+" | "+infos[j].name+")", pat)
	} else {
		a.report(turnapi.RiskDangerous, RuleDecodeExec, "runs text it decodes ("+infos[i].name+" | "+infos[j].name+")", pat)
	}
}

// xargsInput checks the command xargs builds from literal input: the
// input split into words, or whole (xargs -0).
func (a *assessor) xargsInput(st syntax.Node, command []field, text string, sc *scope, depth int) {
	if depth >= maxDepth {
		a.tooDeep = true
		return
	}
	base := call{sc: sc, depth: depth + 1, node: st}
	for _, words := range [][]string{strings.Fields(text), {strings.TrimSuffix(text, "\n")}} {
		f := slices.Clone(command)
		for i, w := range words {
			if i == maxInputs {
				break
			}
			f = append(f, field{s: w, lit: true})
		}
		a.run(base, f)
	}
	// xargs -I REPL puts each line where REPL is: any word of the
	// command may be REPL (xargs -I% sh -c %).
	line := strings.TrimSuffix(text, "\n")
	if first, _, _ := strings.Cut(line, "\n"); first != "" {
		for i := 1; i < len(command) && i <= maxInputs; i++ {
			f := slices.Clone(command)
			f[i] = field{s: first, lit: true}
			a.run(base, f)
		}
	}
}

// parallelCommand is the program GNU parallel runs for each line it
// reads, when it reads its inputs from stdin.
func parallelCommand(st *syntax.Stmt, sc *scope) string {
	ce, ok := st.Cmd.(*syntax.CallExpr)
	if !ok || len(ce.Args) < 2 || printNode(ce.Args[0]) != "parallel" {
		return ""
	}
	words := make([]string, 0, len(ce.Args)-1)
	for _, w := range ce.Args[1:] {
		words = append(words, printNode(w))
	}
	p := parallelOpts.parse(words)
	for _, o := range p.operands {
		if strings.HasPrefix(o, ":::") {
			return ""
		}
	}
	if len(p.operands) == 0 {
		return ""
	}
	f := strings.Fields(strings.Trim(p.operands[0], `'"`))
	if len(f) == 0 {
		return ""
	}
	return baseName(f[0])
}

// teeWrites remembers what tee writes into its files: its input, when
// that is known.
func (a *assessor) teeWrites(st *syntax.Stmt, in string, known bool, sc *scope, depth int) {
	ce, ok := st.Cmd.(*syntax.CallExpr)
	if !ok || len(ce.Args) == 0 {
		return
	}
	words := strs(decoder{a: a, sc: sc, depth: depth}.words(ce.Args))
	if baseName(words[0]) != "tee" {
		return
	}
	p := teeOpts.parse(words[1:])
	for _, f := range p.operands {
		key := path.Clean(sc.resolve(f))
		if prev, seen := sc.written[key]; seen && p.has("-a", "--append") {
			in, known = prev.text+in, known && prev.ok
		}
		sc.written[key] = procOutput{in, known}
	}
}

// findXargs checks xargs (or parallel) reading what find or ls lists:
// secret files it names are read, and deleting what an unnarrowed find
// lists deletes every file under its start paths.
func (a *assessor) findXargs(producer *syntax.Stmt, in cmdInfo, sc *scope, depth int) {
	ce, ok := producer.Cmd.(*syntax.CallExpr)
	if !ok || len(ce.Args) == 0 {
		return
	}
	words := strs(decoder{a: a, sc: sc, depth: depth}.words(ce.Args))
	if !noReaders[in.name] {
		for _, w := range words[1:] {
			if isSecretFile(sc.resolve(w)) {
				a.report(turnapi.RiskDangerous, RuleSecretRead, "reads the secret files "+short(baseName(words[0]))+" lists (xargs "+in.name+")",
					rawPattern(printNode(producer))+" | xargs "+in.name)
				break
			}
		}
	}
	if baseName(words[0]) != "find" {
		return
	}
	switch in.name {
	case "rm", "shred", "unlink", "rmdir", "srm":
	default:
		return
	}
	starts, _, narrowed := findScope(words[1:], sc)
	pat := rawPattern(printNode(producer)) + " | xargs " + in.name
	if !narrowed {
		for _, s := range starts {
			a.wholeTreeDelete(s, "find "+short(s)+" | xargs "+in.name, pat)
		}
	}
	a.report(turnapi.RiskDangerous, RuleRecursiveDelete, "deletes what find lists (find | xargs "+in.name+")", pat)
}

// knownInput checks literal text a shell or interpreter reads as its
// program.
func (a *assessor) knownInput(in cmdInfo, text string, sc *scope, depth int) {
	if in.lang == "sh" {
		a.script(text, sc, depth+1)
		return
	}
	c := &cmd{call: call{sc: sc, depth: depth}, name: in.name}
	switch in.lang {
	case "make":
		a.makeText(c, text)
	case "awk":
		a.awkProgram(c, text)
	default:
		a.inlineCode(c, in.lang, text)
	}
}

// stageOutput works out what one pipeline stage prints when it only
// prints literal text or decodes known input.
func (d decoder) stageOutput(s *syntax.Stmt, in string, hasIn bool) (string, bool) {
	ce, ok := s.Cmd.(*syntax.CallExpr)
	if !ok || len(ce.Args) == 0 {
		return "", false
	}
	inner := decoder{a: d.a, sc: d.sc, mode: d.mode, depth: d.depth + 1}
	f := inner.words(ce.Args)
	if doc, ok := inner.stdin(s.Redirs); ok {
		in, hasIn = doc, true
	}
	return staticOutput(strs(f), in, hasIn)
}

// staticOutput is the output of echo, printf, cat and the decoders on
// known input.
func staticOutput(args []string, in string, hasIn bool) (string, bool) {
	name, rest := baseName(args[0]), args[1:]
	switch name {
	case "echo":
		escapes, newline := false, true
		for len(rest) > 0 && len(rest[0]) > 1 && rest[0][0] == '-' && strings.Trim(rest[0][1:], "neE") == "" {
			escapes = escapes || strings.Contains(rest[0], "e")
			newline = newline && !strings.Contains(rest[0], "n")
			rest = rest[1:]
		}
		out := strings.Join(rest, " ")
		if escapes {
			out, _ = format("%b", []string{octalZero(out)})
		}
		if newline {
			out += "\n"
		}
		return out, true
	case "printf":
		if len(rest) == 0 {
			return "", false
		}
		if strings.Contains(rest[0], "%b") {
			args := slices.Clone(rest[1:])
			for i := range args {
				args[i] = octalZero(args[i])
			}
			return format(rest[0], args)
		}
		return format(rest[0], rest[1:])
	case "cat":
		return in, hasIn && len(rest) == 0
	}
	if !hasIn {
		return "", false
	}
	switch {
	case (name == "base64" || name == "openssl") && hasAny(rest, "-d", "--decode", "-D", "-di", "-id"):
		return decodeBase64(in)
	case name == "xxd" && clusterHas(rest, 'r'):
		b, err := hex.DecodeString(strings.Join(strings.Fields(in), ""))
		return string(b), err == nil
	case name == "rev":
		lines := strings.Split(in, "\n")
		for i, l := range lines {
			r := []rune(l)
			slices.Reverse(r)
			lines[i] = string(r)
		}
		return strings.Join(lines, "\n"), true
	}
	return "", false
}

// echoOctal matches the octal escape of echo -e and printf %b: \0 and up
// to three octal digits.
var echoOctal = regexp.MustCompile(`\\0[0-7]{0,3}`)

// octalZero decodes the \0NNN escapes of echo -e and printf %b, which
// expand.Format does not read the way bash does.
func octalZero(s string) string {
	return echoOctal.ReplaceAllStringFunc(s, func(m string) string {
		n, _ := strconv.ParseUint("0"+m[2:], 8, 16)
		if n > 255 {
			return m
		}
		return string([]byte{byte(n)})
	})
}

// format is printf: expand.Format without panics.
func format(f string, args []string) (out string, ok bool) {
	defer func() {
		if recover() != nil {
			out, ok = "", false
		}
	}()
	// printf reuses its format until the arguments run out.
	var b strings.Builder
	for {
		s, n, err := expand.Format(&expand.Config{Env: environ{}}, f, args)
		if err != nil {
			return "", false
		}
		b.WriteString(s)
		if n <= 0 || n >= len(args) || b.Len() > 1<<20 {
			return b.String(), true
		}
		args = args[n:]
	}
}

func decodeBase64(in string) (string, bool) {
	s := strings.Join(strings.Fields(in), "")
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil {
			return string(b), true
		}
	}
	return "", false
}

func hasAny(args []string, flags ...string) bool {
	for _, f := range flags {
		if slices.Contains(args, f) {
			return true
		}
	}
	return false
}

// decoderCmd marks the programs that turn their input into other text.
func (a *assessor) decoderCmd(c *cmd) {
	switch c.name {
	case "base64", "base32", "basenc", "openssl":
		c.info.decoder = hasAny(c.args, "-d", "--decode", "-D", "-di", "-id") || clusterHas(c.args, 'd')
	case "xxd":
		c.info.decoder = clusterHas(c.args, 'r') || slices.Contains(c.args, "-revert")
	case "gzip", "bzip2", "xz", "zstd", "lzma":
		c.info.decoder = clusterHas(c.args, 'd') || slices.Contains(c.args, "--decompress")
	default:
		c.info.decoder = true
	}
}

var (
	curlOpts = opts{short: "dHXuAeoTFbcKmwxrEUYyzCDQtP", permute: true, long: longs("output=", "data=", "header=",
		"request=", "user=", "user-agent=", "referer=", "upload-file=", "form=", "cookie=", "cookie-jar=", "config=",
		"max-time=", "write-out=", "proxy=", "range=", "cert=", "url=", "data-raw=", "data-binary=", "data-urlencode=",
		"connect-timeout=", "retry=", "dump-header=", "output-dir=", "remote-name", "location", "silent", "fail",
		"show-error", "insecure", "compressed", "json=", "resolve=", "connect-to=", "interface=", "cacert=", "key=")}
	wgetOpts = opts{short: "OoaPeUtTwYQlADRIXBi", permute: true, long: longs("output-document=", "output-file=",
		"append-output=", "directory-prefix=", "execute=", "user-agent=", "tries=", "timeout=", "wait=", "quota=",
		"level=", "accept=", "domains=", "reject=", "include-directories=", "exclude-directories=", "base=",
		"input-file=", "header=", "post-data=", "post-file=", "user=", "password=", "quiet", "no-verbose",
		"continue", "recursive", "mirror", "no-check-certificate")}
)

// downloader: curl, wget ... print a download or save it to a file; a
// file they save is remembered so that running it later is seen.
func (a *assessor) downloader(c *cmd) {
	c.info.downloader = true
	switch c.name {
	case "curl":
		p := curlOpts.parse(c.args)
		for _, o := range p.values["-o"] {
			a.downloaded(c, o)
		}
		for _, o := range p.values["--output"] {
			a.downloaded(c, o)
		}
		if p.has("-O", "--remote-name") {
			for _, u := range p.operands {
				a.downloaded(c, urlBase(u))
			}
		}
		if p.has("-o", "--output", "-O", "--remote-name") {
			c.info.downloader = false
		}
	case "wget":
		p := wgetOpts.parse(c.args)
		if o, ok := p.value("-O", "--output-document"); ok {
			if o != "-" {
				a.downloaded(c, o)
				c.info.downloader = false
			}
			return
		}
		c.info.downloader = false
		for _, u := range p.operands {
			a.downloaded(c, urlBase(u))
		}
	}
}

// downloaded remembers a file a download wrote and checks where it is.
func (a *assessor) downloaded(c *cmd, file string) {
	if file == "" || file == "-" {
		return
	}
	c.sc.downloaded[path.Clean(file)] = true
	a.writeTarget(c.sc.resolve(file), c.name+" -o", c.pattern(), false)
}

// urlBase is the file name a URL is saved under.
func urlBase(u string) string {
	u, _, _ = strings.Cut(u, "?")
	u, _, _ = strings.Cut(u, "#")
	return path.Base(u)
}

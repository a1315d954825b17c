package approval

import (
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/talaria-agent/talaria/internal/turnapi"
)

// pattern is the generic pattern of a command: see canon. It is worked
// out once.
func (c *cmd) pattern() string {
	if c.pat == "" {
		c.pat = canon(c.name, c.args)
	}
	return c.pat
}

// danger reports a Dangerous finding about the whole command.
func (a *assessor) danger(c *cmd, rule, reason string) {
	a.report(turnapi.RiskDangerous, rule, reason, c.pattern())
}

func (a *assessor) mkfs(c *cmd) {
	for _, arg := range c.args {
		if strings.HasPrefix(arg, "/dev/") {
			a.report(turnapi.RiskBlocked, RuleMkfsDevice, "formats a device ("+c.name+" "+short(arg)+")", c.pattern())
		}
	}
}

// sqlDrop finds statements that destroy tables or databases.
var sqlDrop = regexp.MustCompile(`(?i)\b(?:drop\s+(?:table|database|schema)|truncate)\b`)

// sqlClient: a SQL client told to DROP or TRUNCATE by its arguments or
// its heredoc; dropdb and mysqladmin drop.
func (a *assessor) sqlClient(c *cmd) {
	c.info.lang = "sql"
	switch c.name {
	case "dropdb":
		a.danger(c, RuleSQLDrop, "drops a database (dropdb)")
		return
	case "mysqladmin":
		if slices.Contains((opts{short: "uhpPS", permute: true}).parse(c.args).operands, "drop") {
			a.danger(c, RuleSQLDrop, "drops a database (mysqladmin drop)")
		}
		return
	}
	a.sqlShell(c)
	texts := append(slices.Clone(c.args), c.stdin)
	for _, t := range texts {
		if sqlDrop.MatchString(t) {
			a.danger(c, RuleSQLDrop, "drops or truncates database data ("+c.name+": DROP/TRUNCATE)")
			return
		}
	}
}

// sqlInput checks SQL piped into a client.
func (a *assessor) sqlInput(client, text string) {
	if sqlDrop.MatchString(text) {
		a.report(turnapi.RiskDangerous, RuleSQLDrop, "drops or truncates database data ("+client+": DROP/TRUNCATE)", client+" <<< "+rawPattern(text))
	}
}

// metadataHosts are the addresses of cloud instance metadata services,
// which hand out the machine's credentials.
var metadataHosts = []string{"169.254.169.254", "metadata.google.internal", "fd00:ec2::254", "100.100.100.200", "169.254.170.2"}

// textOnly are programs that only print or search their arguments.
var textOnly = map[string]bool{"echo": true, "printf": true, "grep": true, "egrep": true, "fgrep": true, "rg": true}

// metadata: a request to a cloud metadata address.
func (a *assessor) metadata(c *cmd) {
	if textOnly[c.name] {
		return
	}
	for _, arg := range c.args {
		if hasMetadataHost(arg) {
			a.danger(c, RuleCloudMetadata, "contacts the cloud metadata service ("+short(arg)+")")
			return
		}
	}
}

func hasMetadataHost(s string) bool {
	s = strings.ToLower(s)
	for _, h := range metadataHosts {
		if strings.Contains(s, h) {
			return true
		}
	}
	if strings.Contains(s, "a9fe:a9fe") { // ::ffff:169.254.169.254
		return true
	}
	for _, tok := range strings.FieldsFunc(s, func(r rune) bool { return strings.ContainsRune("/@:?#[] \t=,;'\"", r) }) {
		if ip, ok := inetAton(tok); ok && (ip == 0xa9fea9fe || ip == 0x646464c8 || ip == 0xa9feaa02) {
			return true
		}
	}
	return false
}

// inetAton reads an IPv4 address the way inet_aton does: one to four
// parts, each decimal, octal (0 prefix) or hexadecimal (0x prefix), the
// last filling the remaining bytes (2852039166, 0xa9fea9fe, 169.254.43518).
func inetAton(s string) (uint32, bool) {
	parts := strings.Split(s, ".")
	if len(parts) > 4 || s == "" {
		return 0, false
	}
	var vals []uint64
	for _, p := range parts {
		base := 10
		switch {
		case strings.HasPrefix(p, "0x"):
			base, p = 16, p[2:]
		case len(p) > 1 && p[0] == '0':
			base, p = 8, p[1:]
		}
		v, err := strconv.ParseUint(p, base, 32)
		if err != nil || p == "" {
			return 0, false
		}
		vals = append(vals, v)
	}
	var ip uint64
	for i, v := range vals[:len(vals)-1] {
		if v > 255 {
			return 0, false
		}
		ip |= v << (24 - 8*i)
	}
	last := vals[len(vals)-1]
	if last >= 1<<(8*(5-len(vals))) {
		return 0, false
	}
	return uint32(ip | last), true
}

package approval

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// sqlDrop finds statements that destroy tables or databases.
var sqlDrop = regexp.MustCompile(`(?i)\b(?:drop\s+(?:table|database|schema)|truncate)\b`)

// sqlClients are the programs that run SQL they are given.
var sqlClients = map[string]bool{"psql": true, "mysql": true, "mariadb": true, "sqlite3": true, "sqlcmd": true,
	"clickhouse-client": true, "duckdb": true, "cockroach": true, "dropdb": true, "mysqladmin": true}

// sqlClient: a SQL client told to DROP or TRUNCATE by its arguments;
// dropdb and mysqladmin drop.
func (a *assessor) sqlClient(c *cmd) {
	switch {
	case !sqlClients[c.name]:
	case c.name == "dropdb":
		a.danger(c, RuleSQLDrop, "drops a database (dropdb)")
	case c.name == "mysqladmin" && slices.Contains(operands(c.args), "drop"),
		slices.ContainsFunc(c.args, sqlDrop.MatchString):
		a.danger(c, RuleSQLDrop, "drops or truncates database data ("+c.name+": DROP/TRUNCATE)")
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

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
	a.danger(c, RuleDiskTool, "creates a filesystem ("+c.name+")")
}

func (a *assessor) diskTool(c *cmd) {
	list := slices.Contains(c.args, "-l") || slices.Contains(c.args, "--list")
	if !list || c.name == "wipefs" || c.name == "mkswap" || c.name == "blkdiscard" {
		a.danger(c, RuleDiskTool, "partitions or wipes a disk ("+c.name+")")
	}
}

func (a *assessor) power(c *cmd) {
	if c.name != "init" && c.name != "telinit" {
		a.danger(c, RuleShutdown, "shuts down or reboots the machine ("+c.name+")")
		return
	}
	if p := (opts{permute: true}).parse(c.args).operands; len(p) > 0 && (p[0] == "0" || p[0] == "6") {
		a.danger(c, RuleShutdown, "shuts down or reboots the machine ("+c.name+" "+p[0]+")")
	}
}

var systemctlOpts = opts{short: "tpHMnos", permute: true, long: longs("type=", "property=", "host=", "machine=",
	"lines=", "output=", "signal=", "state=", "root=", "kill-whom=", "kill-value=", "job-mode=", "what=", "boot-loader-entry=")}

func (a *assessor) systemctl(c *cmd) {
	p := systemctlOpts.parse(c.args).operands
	if len(p) == 0 {
		return
	}
	switch p[0] {
	case "reboot", "poweroff", "halt", "kexec", "soft-reboot":
		a.danger(c, RuleShutdown, "shuts down or reboots the machine (systemctl "+p[0]+")")
	case "stop", "disable", "mask", "kill", "isolate":
		a.danger(c, RuleServiceStop, "stops or disables a system service (systemctl "+p[0]+")")
	}
}

func (a *assessor) service(c *cmd) {
	if p := (opts{permute: true}).parse(c.args).operands; len(p) >= 2 && (p[1] == "stop" || p[1] == "disable") {
		a.danger(c, RuleServiceStop, "stops a system service (service "+short(p[0])+" "+p[1]+")")
	}
}

func (a *assessor) kill(c *cmd) {
	signal, ended := false, false
	for i := 0; i < len(c.args); i++ {
		arg := c.args[i]
		if !ended {
			if arg == "--" {
				ended = true
				continue
			}
			if arg == "-s" || arg == "-n" {
				i++
				signal = true
				continue
			}
			if !signal && len(arg) > 1 && arg[0] == '-' {
				signal = true
				continue
			}
		}
		if arg == "-1" || arg == "1" {
			a.danger(c, RuleKillAll, "kills every process or init (kill "+arg+")")
		}
	}
}

func (a *assessor) killall(c *cmd) {
	if c.name != "pkill" {
		a.danger(c, RuleKillAll, "kills processes by name ("+c.name+")")
		return
	}
	for i, arg := range c.args {
		v := ""
		switch {
		case arg == "--signal" && i+1 < len(c.args):
			v = c.args[i+1]
		case strings.HasPrefix(arg, "--signal="):
			v = arg[len("--signal="):]
		case len(arg) > 1 && arg[0] == '-' && arg[1] != '-':
			v = arg[1:]
		}
		v = strings.TrimPrefix(strings.ToUpper(v), "SIG")
		if v == "9" || v == "KILL" {
			a.danger(c, RuleKillAll, "force-kills processes by pattern (pkill -9)")
			return
		}
	}
}

func (a *assessor) crontab(c *cmd) {
	a.crontabInstall(c)
	if clusterHas(c.args, 'r') {
		a.danger(c, RuleCrontabRemove, "removes the user's crontab (crontab -r)")
	}
}

func (a *assessor) history(c *cmd) {
	if clusterHas(c.args, 'c') {
		a.danger(c, RuleHistoryClear, "clears the shell history (history -c)")
	}
}

func (a *assessor) firewall(c *cmd) {
	switch c.name {
	case "nft":
		p := opts{short: "fIcD", permute: true, long: longs("file=", "includepath=", "define=")}.parse(c.args).operands
		if len(p) > 0 && p[0] == "flush" {
			a.danger(c, RuleFirewallFlush, "flushes the firewall rules (nft flush)")
		}
	case "ufw":
		if p := (opts{permute: true}).parse(c.args).operands; len(p) > 0 && (p[0] == "disable" || p[0] == "reset") {
			a.danger(c, RuleFirewallFlush, "disables or resets the firewall (ufw "+p[0]+")")
		}
	default:
		for _, arg := range c.args {
			if arg == "-F" || strings.HasPrefix(arg, "--flush") {
				a.danger(c, RuleFirewallFlush, "flushes the firewall rules ("+c.name+" -F)")
				return
			}
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
	for _, arg := range c.args {
		if isTalariaHome(c.sc.resolve(arg)) {
			a.danger(c, RuleTalariaWrite, "opens Talaria's own database ("+c.name+" "+short(arg)+")")
			break
		}
	}
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

// packages: removing installed packages.
func (a *assessor) packages(c *cmd) {
	name, args := c.name, c.args
	first := func(shortArgs string) string {
		if p := (opts{short: shortArgs, permute: true}).parse(args).operands; len(p) > 0 {
			return p[0]
		}
		return ""
	}
	remove := ""
	switch {
	case name == "apt" || name == "apt-get" || name == "aptitude":
		if s := first("octa"); s == "remove" || s == "purge" || s == "autoremove" || s == "autopurge" {
			remove = name + " " + s
		}
	case name == "dpkg":
		for _, arg := range args {
			if arg == "-r" || arg == "-P" || arg == "--remove" || arg == "--purge" {
				remove = "dpkg " + arg
			}
		}
	case name == "yum" || name == "dnf" || name == "microdnf" || name == "tdnf" || name == "zypper":
		if s := first("cdex"); s == "remove" || s == "erase" || s == "autoremove" || s == "rm" {
			remove = name + " " + s
		}
	case name == "pacman":
		for _, arg := range args {
			if strings.HasPrefix(arg, "-R") || arg == "--remove" {
				remove = "pacman " + arg
			}
		}
	case name == "apk":
		if first("X") == "del" {
			remove = "apk del"
		}
	case name == "snap":
		if first("") == "remove" {
			remove = "snap remove"
		}
	case name == "brew":
		if s := first(""); s == "uninstall" || s == "remove" || s == "rm" {
			remove = "brew " + s
		}
	case strings.HasPrefix(name, "pip") || name == "gem" || name == "conda" || name == "mamba":
		if s := first("r"); s == "uninstall" || (s == "remove" && (name == "conda" || name == "mamba")) {
			remove = name + " " + s
		}
	case name == "npm" || name == "pnpm":
		global := slices.Contains(args, "-g") || slices.Contains(args, "--global") || slices.Contains(args, "--location=global")
		if s := first(""); global && (s == "uninstall" || s == "remove" || s == "rm" || s == "un" || s == "r" || s == "unlink") {
			remove = name + " " + s + " -g"
		}
	case name == "yarn":
		if p := (opts{permute: true}).parse(args).operands; len(p) >= 2 && p[0] == "global" && p[1] == "remove" {
			remove = "yarn global remove"
		}
	}
	if remove != "" {
		a.danger(c, RulePackageRemove, "removes installed packages ("+short(remove)+")")
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

package approval

import (
	"slices"
	"strings"
)

// opts describes a program's options the way getopt_long reads them.
type opts struct {
	// short lists the option letters that take an argument.
	short string
	// long maps every long option name to whether it takes an argument.
	// An abbreviation of a long name is accepted when it is unique.
	long map[string]bool
	// permute reports that options may follow operands (GNU style);
	// otherwise the first operand ends the options.
	permute bool
}

// longOpt resolves a long option name or a unique abbreviation of one.
func (o opts) longOpt(name string) (string, bool) {
	if _, ok := o.long[name]; ok {
		return name, true
	}
	found := ""
	for k := range o.long {
		if strings.HasPrefix(k, name) {
			if found != "" {
				return "", false // ambiguous: the program refuses it
			}
			found = k
		}
	}
	return found, found != ""
}

// parsed is a command line split into options and operands.
type parsed struct {
	// flags holds each option once: short ones as "-x", long ones by their
	// full name as "--name"; values holds their arguments, in order.
	flags  []string
	values map[string][]string
	// operands are the arguments that are not options, with the index of
	// each in the argument list.
	operands []string
	index    []int
}

func (p parsed) has(flags ...string) bool {
	for _, f := range flags {
		if slices.Contains(p.flags, f) {
			return true
		}
	}
	return false
}

func (p parsed) value(flags ...string) (string, bool) {
	for _, f := range flags {
		if v := p.values[f]; len(v) > 0 {
			return v[len(v)-1], true
		}
	}
	return "", false
}

// parse splits args; with permute off it stops at the first operand, and
// the rest are all operands.
func (o opts) parse(args []string) parsed {
	p := parsed{values: map[string][]string{}}
	seen := map[string]bool{}
	add := func(flag string, v *string) {
		if !seen[flag] {
			seen[flag] = true
			p.flags = append(p.flags, flag)
		}
		if v != nil {
			p.values[flag] = append(p.values[flag], *v)
		}
	}
	rest := func(i int) {
		for ; i < len(args); i++ {
			p.operands = append(p.operands, args[i])
			p.index = append(p.index, i)
		}
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			rest(i + 1)
			return p
		case strings.HasPrefix(a, "--"):
			name, v, hasV := strings.Cut(a[2:], "=")
			full, ok := o.longOpt(name)
			if !ok {
				full = name
			}
			if hasV {
				add("--"+full, &v)
			} else if o.long[full] && i+1 < len(args) {
				i++
				add("--"+full, &args[i])
			} else {
				add("--"+full, nil)
			}
		case len(a) > 1 && a[0] == '-':
			for k := 1; k < len(a); k++ {
				f := "-" + string(a[k])
				if strings.IndexByte(o.short, a[k]) < 0 {
					add(f, nil)
					continue
				}
				v := a[k+1:]
				if v == "" && i+1 < len(args) {
					i++
					v = args[i]
				}
				add(f, &v)
				break
			}
		default:
			if !o.permute {
				rest(i)
				return p
			}
			p.operands = append(p.operands, a)
			p.index = append(p.index, i)
		}
	}
	return p
}

// longs builds an opts.long map: names ending in "=" take an argument.
func longs(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		name, arg := strings.CutSuffix(n, "=")
		m[name] = arg
	}
	return m
}

// clusterHas reports whether a short-option word ("-r", "-ir") holds c.
func clusterHas(args []string, c byte) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if len(a) > 1 && a[0] == '-' && a[1] != '-' && strings.IndexByte(a[1:], c) >= 0 {
			return true
		}
	}
	return false
}

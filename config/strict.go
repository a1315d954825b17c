package config

import (
	"cmp"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/talaria-agent/talaria/internal/editdistance"
)

// fileProblem is one mistake in the configuration file, at a line.
type fileProblem struct {
	line int
	msg  string
}

// unmarshalerType is yaml.v3's hook: a type that decodes itself is checked
// by its own UnmarshalYAML, not by the key walk.
var unmarshalerType = reflect.TypeOf((*yaml.Unmarshaler)(nil)).Elem()

// knownKeys walks node against the Go type t that will receive it and
// reports every mapping key t has no field for. section is the dotted path
// of node ("" at the top, where the environment-style keys are also known).
// leaves maps the line of each key seen to its dotted path, so that a type
// error yaml reports by line can name the key. Pure.
func knownKeys(node *yaml.Node, t reflect.Type, section string, leaves map[int]string) []fileProblem {
	for node.Kind == yaml.AliasNode && node.Alias != nil {
		node = node.Alias
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Implements(unmarshalerType) || reflect.PointerTo(t).Implements(unmarshalerType) {
		return nil
	}
	var out []fileProblem
	switch t.Kind() {
	case reflect.Struct:
		if node.Kind != yaml.MappingNode {
			return nil // yaml's decoder reports the type mismatch
		}
		fields := yamlFields(t)
		for i := 0; i+1 < len(node.Content); i += 2 {
			key, val := node.Content[i], node.Content[i+1]
			path := joinKey(section, key.Value)
			ft, ok := fields[key.Value]
			switch {
			case ok:
				leaves[key.Line] = path
				out = append(out, knownKeys(val, ft, path, leaves)...)
			case section == "" && isEnvKey(key.Value):
				leaves[key.Line] = key.Value
			default:
				out = append(out, fileProblem{key.Line, unknownKeyMessage(key.Value, section, fields)})
			}
		}
	case reflect.Slice, reflect.Array:
		if node.Kind != yaml.SequenceNode {
			return nil
		}
		for i, item := range node.Content {
			out = append(out, knownKeys(item, t.Elem(), fmt.Sprintf("%s[%d]", section, i), leaves)...)
		}
	case reflect.Map:
		if node.Kind != yaml.MappingNode {
			return nil
		}
		for i := 0; i+1 < len(node.Content); i += 2 {
			path := joinKey(section, node.Content[i].Value)
			leaves[node.Content[i].Line] = path
			out = append(out, knownKeys(node.Content[i+1], t.Elem(), path, leaves)...)
		}
	}
	return out
}

// yamlFields maps the YAML key of every decodable field of struct t to its
// type, following yaml.v3's rules (tag name, else the lower-cased field
// name; "-" skipped; ",inline" flattened). Pure.
func yamlFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("yaml")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if strings.Contains(","+opts+",", ",inline,") {
			ft := f.Type
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				for k, v := range yamlFields(ft) {
					out[k] = v
				}
			}
			continue
		}
		name = cmp.Or(name, strings.ToLower(f.Name))
		out[name] = f.Type
	}
	return out
}

func joinKey(section, key string) string {
	if section == "" {
		return key
	}
	return section + "." + key
}

func isEnvKey(k string) bool { return slices.Contains(envKeys, k) }

// unknownKeyMessage says which key is unknown where, with the closest
// known key of that section when one is a likely typo. Pure.
func unknownKeyMessage(key, section string, fields map[string]reflect.Type) string {
	where := "at the top level"
	if section != "" {
		where = "in " + section
	}
	msg := fmt.Sprintf("unknown key %q %s", key, where)
	known := make([]string, 0, len(fields))
	for k := range fields {
		known = append(known, k)
	}
	if section == "" {
		known = append(known, envKeys...)
	}
	if s := closest(key, known); s != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", s)
	}
	return msg
}

// closest returns the candidate nearest to key by edit distance (case
// folded), when it is near enough to be a typo; "" otherwise. Pure.
func closest(key string, candidates []string) string {
	sort.Strings(candidates)
	best, bestD := "", 0
	for _, c := range candidates {
		d := editdistance.Strings(strings.ToLower(key), strings.ToLower(c))
		if best == "" || d < bestD {
			best, bestD = c, d
		}
	}
	limit := 2
	if len(key) <= 3 {
		limit = 1
	}
	if best == "" || bestD > limit {
		return ""
	}
	return best
}

// yamlLine matches the line yaml.v3 puts in its messages.
var yamlLine = regexp.MustCompile(`^(?:yaml: )?line (\d+): (.*)$`)

// yamlTag matches yaml.v3's type names with the value when it has one
// ("!!str `abc` ", "!!seq ").
var yamlTag = regexp.MustCompile("!!(\\w+) (`[^`]*` )?")

// tagNames say yaml.v3's node kinds in words.
var tagNames = map[string]string{"seq": "a list", "map": "a mapping", "str": "a string", "int": "a number", "bool": "a boolean", "float": "a number"}

// plainTag replaces a yaml.v3 type name by the value, or the kind in words. Pure.
func plainTag(m string) string {
	sm := yamlTag.FindStringSubmatch(m)
	if sm[2] != "" {
		return sm[2]
	}
	if n, ok := tagNames[sm[1]]; ok {
		return n + " "
	}
	return sm[1] + " "
}

// yamlProblems turns an error of yaml.v3 (syntax, a type mismatch, or a
// custom unmarshaler's) into problems with lines; the key a line holds,
// from leaves, prefixes its message. Pure.
func yamlProblems(err error, leaves map[int]string) []fileProblem {
	var msgs []string
	if te, ok := err.(*yaml.TypeError); ok {
		msgs = te.Errors
	} else {
		msgs = []string{err.Error()}
	}
	out := make([]fileProblem, 0, len(msgs))
	for _, m := range msgs {
		m = strings.TrimPrefix(m, "yaml: ")
		p := fileProblem{msg: m}
		if sm := yamlLine.FindStringSubmatch(m); sm != nil {
			p.line, _ = strconv.Atoi(sm[1])
			p.msg = sm[2]
		}
		p.msg = strings.Replace(yamlTag.ReplaceAllStringFunc(p.msg, plainTag), "cannot unmarshal ", "cannot read ", 1)
		if strings.HasSuffix(p.msg, "into time.Duration") {
			p.msg += " (a duration needs a unit: 0s, 90s, 5m, 24h)"
		}
		if k := leaves[p.line]; k != "" && p.line > 0 {
			p.msg = k + ": " + p.msg
		}
		out = append(out, p)
	}
	return out
}

// fileError renders problems of the file at path as one line, each as
// path:line: message, wrapping ErrInvalid.
func fileError(path string, problems []fileProblem) error {
	sort.SliceStable(problems, func(i, j int) bool { return problems[i].line < problems[j].line })
	parts := make([]string, len(problems))
	for i, p := range problems {
		msg := strings.Join(strings.Fields(p.msg), " ") // one line, whatever yaml says
		if p.line > 0 {
			parts[i] = fmt.Sprintf("%s:%d: %s", path, p.line, msg)
		} else {
			parts[i] = fmt.Sprintf("%s: %s", path, msg)
		}
	}
	return fmt.Errorf("%w: %s", ErrInvalid, strings.Join(parts, "; "))
}

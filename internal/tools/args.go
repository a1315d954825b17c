package tools

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/talaria-agent/talaria/internal/loop"
)

// args is a decoded argument object. Fields are read one by one, by their
// exact names, so that every problem can be reported with the argument's
// name. A JSON null counts as an absent argument; unknown arguments are
// ignored.
type args struct {
	tool   string
	fields map[string]json.RawMessage
}

// parseArgs decodes a call's raw arguments, which must be a JSON object.
// Empty arguments and null are treated as {}. It is the one decoding of
// arguments: an object repeating a key, or holding two keys equal but for
// case, is refused, so whatever inspects a call before it runs (approval)
// and the tool itself cannot read different values.
func parseArgs(tool string, raw json.RawMessage) (args, error) {
	a := args{tool: tool, fields: map[string]json.RawMessage{}}
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || bytes.Equal(trimmed, []byte("null")) {
		return a, nil
	}
	if !json.Valid(trimmed) {
		return a, fmt.Errorf("%w for %s: malformed JSON: %s", ErrInvalidArguments, tool, snippet(trimmed))
	}
	if trimmed[0] != '{' {
		return a, fmt.Errorf("%w for %s: arguments must be a JSON object, got %s", ErrInvalidArguments, tool, jsonKind(trimmed))
	}
	if clash, ok := loop.FindKeyClash(string(trimmed)); ok {
		return a, fmt.Errorf("%w for %s: %s", ErrInvalidArguments, tool, clash.Error())
	}
	if err := json.Unmarshal(trimmed, &a.fields); err != nil {
		return a, fmt.Errorf("%w for %s: %v", ErrInvalidArguments, tool, err)
	}
	return a, nil
}

// value returns an argument's raw JSON; null counts as absent.
func (a args) value(name string) (json.RawMessage, bool) {
	v, ok := a.fields[name]
	if !ok {
		return nil, false
	}
	v = bytes.TrimSpace(v)
	if len(v) == 0 || bytes.Equal(v, []byte("null")) {
		return nil, false
	}
	return v, true
}

func (a args) errorf(format string, v ...any) error {
	return fmt.Errorf("%w for %s: %s", ErrInvalidArguments, a.tool, fmt.Sprintf(format, v...))
}

// str reads a string argument.
func (a args) str(name string) (string, bool, error) {
	return a.stringValue(name, false)
}

// idStr reads a string argument that may also be sent as a number, as
// models sometimes do with identifiers; the number's JSON text is used.
func (a args) idStr(name string) (string, bool, error) {
	return a.stringValue(name, true)
}

func (a args) stringValue(name string, allowNumber bool) (string, bool, error) {
	v, ok := a.value(name)
	if !ok {
		return "", false, nil
	}
	switch {
	case v[0] == '"':
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return "", false, a.errorf("%q: %v", name, err)
		}
		return s, true, nil
	case allowNumber && jsonKind(v) == "a number":
		return string(v), true, nil
	}
	return "", false, a.errorf("%q must be a string, got %s", name, jsonKind(v))
}

// requiredStr reads a string argument that must be present.
func (a args) requiredStr(name string) (string, error) {
	s, ok, err := a.str(name)
	if err != nil {
		return "", err
	}
	if !ok {
		return "", a.errorf("missing required argument %q", name)
	}
	return s, nil
}

// integer reads an integer argument; a string holding an integer is accepted.
func (a args) integer(name string) (int, bool, error) {
	v, ok := a.value(name)
	if !ok {
		return 0, false, nil
	}
	text := string(v)
	if v[0] == '"' {
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return 0, false, a.errorf("%q: %v", name, err)
		}
		text = strings.TrimSpace(s)
	} else if v[0] != '-' && (v[0] < '0' || v[0] > '9') {
		return 0, false, a.errorf("%q must be an integer, got %s", name, jsonKind(v))
	}
	if n, err := strconv.Atoi(text); err == nil {
		return n, true, nil
	}
	f, err := strconv.ParseFloat(text, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, false, a.errorf("%q must be an integer, got %s", name, snippet(v))
	}
	if f != math.Trunc(f) {
		return 0, false, a.errorf("%q must be a whole number, got %s", name, text)
	}
	if f > math.MaxInt32 || f < math.MinInt32 {
		return 0, false, a.errorf("%q is out of range: %s", name, text)
	}
	return int(f), true, nil
}

// boolean reads a boolean argument; the strings "true" and "false" are
// accepted.
func (a args) boolean(name string) (bool, bool, error) {
	v, ok := a.value(name)
	if !ok {
		return false, false, nil
	}
	text := string(v)
	if v[0] == '"' {
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return false, false, a.errorf("%q: %v", name, err)
		}
		text = strings.ToLower(strings.TrimSpace(s))
	}
	switch text {
	case "true":
		return true, true, nil
	case "false":
		return false, true, nil
	}
	return false, false, a.errorf("%q must be a boolean, got %s", name, snippet(v))
}

// jsonKind names the JSON type of a valid JSON value.
func jsonKind(v []byte) string {
	if len(v) == 0 {
		return "nothing"
	}
	switch v[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

// snippet quotes the start of a value for an error message.
func snippet(v []byte) string {
	const max = 80
	s := string(v)
	if len(s) > max {
		s = truncateUTF8(s, max) + "..."
	}
	return strconv.Quote(s)
}

// requiredPath reads the required, non-blank "path" argument.
func (a args) requiredPath() (string, error) {
	path, err := a.requiredStr("path")
	if err != nil {
		return "", err
	}
	if strings.TrimSpace(path) == "" {
		return "", a.errorf(`"path" must not be empty`)
	}
	return path, nil
}

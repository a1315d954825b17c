package tools

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"

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

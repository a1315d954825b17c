package loop

import (
	"encoding/json"
	"strings"
	"testing"
)

var argumentCases = []struct {
	args string
	want ArgsStatus
}{
	{"", ArgsValid},
	{"  ", ArgsValid},
	{"\n\t", ArgsValid},
	{"{}", ArgsValid},
	{` {"a": 1} `, ArgsValid},
	{`{"a": "x\"y"}`, ArgsValid},
	{`{"a": [1, {"b": null}], "c": -1.5e+3, "d": true}`, ArgsValid},
	{`{"path": "a.txt"`, ArgsTruncated},
	{`{f`, ArgsInvalid},
	{`{1`, ArgsInvalid},
	{`{"a": 1, t`, ArgsInvalid},
	{`{"a": 1, "b`, ArgsTruncated},
	{`{"a": [t`, ArgsTruncated},
	{`{"path": "a.t`, ArgsTruncated},
	{`{"a": [1, 2`, ArgsTruncated},
	{`{"a":`, ArgsTruncated},
	{`{`, ArgsTruncated},
	{` { `, ArgsTruncated},
	{`{"a": 1,`, ArgsTruncated},
	{`{"a": 1, `, ArgsTruncated},
	{`{"a": [1,`, ArgsTruncated},
	{`{"a"`, ArgsTruncated},
	{`{"a": tr`, ArgsTruncated},
	{`{"a": -`, ArgsTruncated},
	{`{"a": 1.`, ArgsTruncated},
	{`{"a": 1e+`, ArgsTruncated},
	{`{"a": 12`, ArgsTruncated},
	{`{"a": "\`, ArgsTruncated},
	{`{"a": "\u12`, ArgsTruncated},
	{`{"a": {"b": {}`, ArgsTruncated},
	{`{"a": 1}}`, ArgsInvalid},
	{`{"a": 1} trailing`, ArgsInvalid},
	{`{"a": 1}{`, ArgsInvalid},
	{`[1,2]`, ArgsInvalid},
	{`[`, ArgsInvalid},
	{`not json`, ArgsInvalid},
	{`{'a': 1}`, ArgsInvalid},
	{`null`, ArgsInvalid},
	{`"text"`, ArgsInvalid},
	{`42`, ArgsInvalid},
	{`{"a": tx`, ArgsInvalid},
	{`{"a": 01`, ArgsInvalid},
	{`{"a": 1.e`, ArgsInvalid},
	{`{"a": "\x`, ArgsInvalid},
	{`{"a": "\u12g`, ArgsInvalid},
	{"{\"a\": \"x\ny", ArgsInvalid},
	{`{"a" 1`, ArgsInvalid},
	{`{,`, ArgsInvalid},
	{`{"a": 1,}`, ArgsInvalid},
	{`{"a": [1}`, ArgsInvalid},
	{`{"a": {]`, ArgsInvalid},
	{"\u00a0{}", ArgsInvalid},
	{`{"command": "rm -rf ./x", "Command": "ls"}`, ArgsInvalid},
	{`{"command": "ls", "command": "rm -rf ./x"}`, ArgsInvalid},
	{`{"a": {"b": 1, "B": 2}}`, ArgsInvalid},
	{`{"a": [{"k": 1, "k": 2}]}`, ArgsInvalid},
	{`{"command": "ls", "commands": "x"}`, ArgsValid},
	{`{"a": {"b": 1}, "b": 2}`, ArgsValid},
}

func TestCheckArguments(t *testing.T) {
	t.Parallel()
	for _, tt := range argumentCases {
		if got := CheckArguments(tt.args); got != tt.want {
			t.Errorf("CheckArguments(%q) = %v, want %v", tt.args, got, tt.want)
		}
	}
}

func TestCheckArgumentsDepth(t *testing.T) {
	t.Parallel()
	// encoding/json accepts 10000 nested containers and no more; a prefix
	// nested deeper can never parse.
	for _, tt := range []struct {
		arrays int
		want   ArgsStatus
	}{
		{maxJSONDepth - 1, ArgsTruncated},
		{maxJSONDepth, ArgsInvalid},
	} {
		prefix := `{"a":` + strings.Repeat("[", tt.arrays)
		if got := CheckArguments(prefix); got != tt.want {
			t.Errorf("CheckArguments(%d nested arrays) = %v, want %v", tt.arrays, got, tt.want)
		}
		whole := prefix + strings.Repeat("]", tt.arrays) + "}"
		if parses := json.Valid([]byte(whole)); parses != (tt.want == ArgsTruncated) {
			t.Errorf("json.Valid(%d nested arrays) = %v", tt.arrays, parses)
		}
	}
}

func TestNormalizeArguments(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"", "{}"},
		{" \n", "{}"},
		{`{"a":1}`, `{"a":1}`},
		{` {"a":1} `, ` {"a":1} `},
		{"not json", "not json"},
	}
	for _, tt := range tests {
		if got := NormalizeArguments(tt.in); got != tt.want {
			t.Errorf("NormalizeArguments(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestArgsStatusString(t *testing.T) {
	t.Parallel()
	tests := []struct {
		s    ArgsStatus
		want string
	}{
		{ArgsValid, "valid"},
		{ArgsInvalid, "invalid"},
		{ArgsTruncated, "truncated"},
		{ArgsStatus(7), "ArgsStatus(7)"},
		{ArgsStatus(-1), "ArgsStatus(-1)"},
	}
	for _, tt := range tests {
		if got := tt.s.String(); got != tt.want {
			t.Errorf("ArgsStatus(%d).String() = %q, want %q", int(tt.s), got, tt.want)
		}
	}
}

// tokenEnds are the texts that finish whatever token a truncated object
// stops in (a string or key and its escapes, a literal, a number), or give
// the value or key it waits for.
var tokenEnds = []string{"", "0", `"`, `0"`, `00"`, `000"`, `0000"`, `n"`, `":0`, `0":0`, `00":0`, `000":0`, `0000":0`, `n":0`,
	":0", `"k":0`, "rue", "ue", "e", "alse", "lse", "se", "ull", "ll", "l"}

// completion returns text that, appended to a truncated object, makes it
// whole: the end of its last token, then the closers of the containers the
// standard decoder holds open; "" when none of tokenEnds fits.
func completion(s string) (string, bool) {
	dec := prefixDecoder(s)
	for {
		if _, err := dec.ReadToken(); err != nil {
			break
		}
	}
	var closers strings.Builder
	for i := dec.StackDepth(); i > 0; i-- {
		if kind, _ := dec.StackIndex(i); kind == '{' {
			closers.WriteByte('}')
		} else {
			closers.WriteByte(']')
		}
	}
	for _, end := range tokenEnds {
		if whole := s + end + closers.String(); json.Valid([]byte(whole)) {
			return end + closers.String(), true
		}
	}
	return "", false
}

func TestCompletionOfTruncatedCases(t *testing.T) {
	t.Parallel()
	for _, tt := range argumentCases {
		if tt.want != ArgsTruncated {
			continue
		}
		end, ok := completion(tt.args)
		if whole := tt.args + end; !ok || CheckArguments(whole) != ArgsValid {
			t.Errorf("%q completed as %q does not parse", tt.args, whole)
		}
	}
}

func FuzzCheckArguments(f *testing.F) {
	for _, tt := range argumentCases {
		f.Add(tt.args)
	}
	f.Fuzz(func(t *testing.T, s string) {
		status := CheckArguments(s)
		isObject := json.Valid([]byte(s)) && strings.TrimLeft(s, jsonSpace)[0] == '{'
		_, clash := FindKeyClash(s)
		if isObject && !clash && status != ArgsValid {
			t.Fatalf("CheckArguments(%q) = %v for a JSON object", s, status)
		}
		if clash && status != ArgsInvalid {
			t.Fatalf("CheckArguments(%q) = %v for an object with clashing keys", s, status)
		}
		if norm := NormalizeArguments(s); norm != s && strings.TrimSpace(s) != "" {
			t.Fatalf("NormalizeArguments(%q) = %q changed non-blank text", s, norm)
		}
		switch status {
		case ArgsValid:
			var m map[string]any
			if err := json.Unmarshal([]byte(NormalizeArguments(s)), &m); err != nil || m == nil {
				t.Fatalf("CheckArguments(%q) = valid, but it does not unmarshal into a map: %v", s, err)
			}
		case ArgsTruncated:
			end, ok := completion(s)
			whole := s + end
			_, wholeClash := FindKeyClash(whole)
			if !ok || CheckArguments(whole) != ArgsValid && !wholeClash {
				t.Fatalf("CheckArguments(%q) = truncated, but %q does not parse", s, whole)
			}
		}
		if !isObject || len(s) > 2048 {
			return
		}
		// Every beginning of a JSON object is a JSON object or truncated.
		for i := 1; i < len(s); i++ {
			p := s[:i]
			if strings.TrimSpace(p) == "" {
				continue
			}
			if got := CheckArguments(p); got == ArgsInvalid {
				t.Fatalf("CheckArguments(%q), a beginning of %q, = invalid", p, s)
			}
		}
	})
}

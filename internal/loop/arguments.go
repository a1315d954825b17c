package loop

import (
	"encoding/json"
	"strconv"
	"strings"
)

// ArgsStatus classifies the argument text of a tool call.
type ArgsStatus int

const (
	// ArgsValid is a JSON object, or nothing at all (meaning {}).
	ArgsValid ArgsStatus = iota
	// ArgsInvalid is text that is not a JSON object and cannot become one,
	// or an object holding a key twice (also when equal but for case).
	ArgsInvalid
	// ArgsTruncated is the beginning of a JSON object cut off mid-way: it
	// would parse if more text followed.
	ArgsTruncated
)

// String names the status: "valid", "invalid" or "truncated".
func (s ArgsStatus) String() string {
	switch s {
	case ArgsValid:
		return "valid"
	case ArgsInvalid:
		return "invalid"
	case ArgsTruncated:
		return "truncated"
	}
	return "ArgsStatus(" + strconv.Itoa(int(s)) + ")"
}

// CheckArguments classifies a tool call's argument text: empty/whitespace is
// valid (means {}); a JSON object is valid; anything else that is complete
// JSON or not JSON at all is invalid (arrays, strings, numbers and null too:
// tools take objects); text that is a prefix of a JSON object cut off mid-way
// (an unclosed '{' or '[', an unterminated string, a trailing ',' or ':') is
// truncated. An object that repeats a key, or holds two keys equal but for
// case, is invalid: a tool and a safety check could each read a different one.
func CheckArguments(args string) ArgsStatus {
	if strings.TrimSpace(args) == "" {
		return ArgsValid
	}
	if json.Valid([]byte(args)) {
		if strings.TrimLeft(args, jsonSpace)[0] != '{' {
			return ArgsInvalid
		}
		if _, clash := FindKeyClash(args); clash {
			return ArgsInvalid
		}
		return ArgsValid
	}
	if isObjectPrefix(args) {
		return ArgsTruncated
	}
	return ArgsInvalid
}

// NormalizeArguments returns "{}" for empty/whitespace args, otherwise args
// unchanged.
func NormalizeArguments(args string) string {
	if strings.TrimSpace(args) == "" {
		return "{}"
	}
	return args
}

package loop

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode"
)

// KeyClash is two keys of one JSON object that are equal, or equal but for
// case: a tool reading one and a safety check reading the other would see
// different calls.
type KeyClash struct {
	First, Second string
}

// Error describes the clash in one line for the model.
func (k KeyClash) Error() string {
	if k.First == k.Second {
		return fmt.Sprintf("duplicate key %q: every key may appear only once", k.First)
	}
	return fmt.Sprintf("keys %q and %q differ only in case: send each key once, spelled exactly as in the schema", k.First, k.Second)
}

// FindKeyClash walks the JSON text token by token and returns the first
// object, at any depth, holding two keys that are equal or equal but for
// case. It reports nothing for text that is not valid JSON: that is a
// different problem, found elsewhere.
func FindKeyClash(text string) (KeyClash, bool) {
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	clash, err := walkValue(dec)
	if err != nil {
		return KeyClash{}, false
	}
	return clash, clash != (KeyClash{})
}

// walkValue consumes one JSON value and returns the first clash inside it.
func walkValue(dec *json.Decoder) (KeyClash, error) {
	tok, err := dec.Token()
	if err != nil {
		return KeyClash{}, err
	}
	switch tok {
	case json.Delim('{'):
		return walkObject(dec)
	case json.Delim('['):
		return walkArray(dec)
	}
	return KeyClash{}, nil
}

// walkObject consumes an object's members after its '{'.
func walkObject(dec *json.Decoder) (KeyClash, error) {
	seen := map[string]string{} // folded key -> key as first sent
	var found KeyClash
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return KeyClash{}, err
		}
		key, ok := tok.(string)
		if !ok {
			return KeyClash{}, errors.New("object key is not a string")
		}
		folded := foldKey(key)
		if first, dup := seen[folded]; dup && found == (KeyClash{}) {
			found = KeyClash{First: first, Second: key}
		}
		seen[folded] = key
		inner, err := walkValue(dec)
		if err != nil {
			return KeyClash{}, err
		}
		if found == (KeyClash{}) {
			found = inner
		}
	}
	if _, err := dec.Token(); err != nil { // the closing '}'
		return KeyClash{}, err
	}
	return found, nil
}

// walkArray consumes an array's elements after its '['.
func walkArray(dec *json.Decoder) (KeyClash, error) {
	var found KeyClash
	for dec.More() {
		inner, err := walkValue(dec)
		if err != nil {
			return KeyClash{}, err
		}
		if found == (KeyClash{}) {
			found = inner
		}
	}
	if _, err := dec.Token(); err != nil { // the closing ']'
		return KeyClash{}, err
	}
	return found, nil
}

// ArgumentsProblem completes "the arguments are ..." in one line, saying
// why a tool call's arguments are not valid; "" when they are.
func ArgumentsProblem(args string) string {
	switch CheckArguments(args) {
	case ArgsValid:
		return ""
	case ArgsTruncated:
		return "cut off before the end of the JSON object"
	}
	if clash, ok := FindKeyClash(args); ok {
		return "ambiguous: " + clash.Error()
	}
	return "not a valid JSON object"
}

// foldKey maps every key equal to key under Unicode case folding (what
// strings.EqualFold and encoding/json's field matching accept) to one
// string: each rune becomes the smallest rune of its fold orbit.
func foldKey(key string) string {
	var b strings.Builder
	for _, r := range key {
		least := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			least = min(least, f)
		}
		b.WriteRune(least)
	}
	return b.String()
}

package loop

import (
	"encoding/json/jsontext"
	"errors"
	"io"
	"strings"
)

// jsonSpace holds the characters JSON allows between tokens.
const jsonSpace = " \t\n\r"

// maxJSONDepth is the deepest nesting of objects and arrays the standard
// decoders accept; a prefix nested deeper can never parse.
const maxJSONDepth = 10000

// isObjectPrefix reports whether s is the beginning of a JSON object text
// that stops before the object is closed: the standard decoder reads it to
// its end without a syntax error and wants more. Keys may repeat and
// strings may hold invalid UTF-8 here, as encoding/json.Valid allows
// (CheckArguments judges repeated keys of a whole object on its own).
func isObjectPrefix(s string) bool {
	dec := prefixDecoder(s)
	if dec.PeekKind() != '{' {
		return false
	}
	for {
		if _, err := dec.ReadToken(); err != nil {
			return errors.Is(err, io.ErrUnexpectedEOF) && nameCanFollow(dec, s)
		}
		if dec.StackDepth() == 0 {
			return false // the object closed: it is whole, or text follows it
		}
	}
}

// nameCanFollow reports whether the text the decoder could not finish may
// begin what comes next: where an object wants a name, only a string can
// (the decoder learns a cut token's kind only once it is whole, so "{f"
// would otherwise pass as the start of false).
func nameCanFollow(dec *jsontext.Decoder, s string) bool {
	kind, length := dec.StackIndex(dec.StackDepth())
	if kind != '{' || length%2 == 1 {
		return true
	}
	rest := strings.TrimLeft(s[dec.InputOffset():], jsonSpace+",")
	return rest == "" || rest[0] == '"'
}

// prefixDecoder reads s as isObjectPrefix does.
func prefixDecoder(s string) *jsontext.Decoder {
	return jsontext.NewDecoder(strings.NewReader(s), jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
}

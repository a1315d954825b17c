package loop

import "strings"

// jsonSpace holds the characters JSON allows between tokens.
const jsonSpace = " \t\n\r"

// maxJSONDepth is the deepest nesting of objects and arrays encoding/json
// accepts; a prefix nested deeper can never parse.
const maxJSONDepth = 10000

// scanState is where a prefixScanner stands in the JSON grammar.
type scanState int

const (
	stBegin       scanState = iota // before the top-level object
	stObjectFirst                  // after '{': a key or '}'
	stKey                          // after ',' in an object: a key
	stColon                        // after a key: ':'
	stValue                        // after ':', or ',' in an array: a value
	stArrayFirst                   // after '[': a value or ']'
	stAfterValue                   // after a value: ',' or a closing bracket
	stDone                         // after the top-level object: only spaces
	stString                       // inside a string
	stEscape                       // after '\' in a string
	stUnicode                      // inside the hex digits of '\u'
	stLiteral                      // inside true, false or null
	stMinus                        // after a number's '-'
	stZero                         // after a number's leading '0'
	stInt                          // inside a number's integer digits
	stDot                          // after a number's '.'
	stFrac                         // inside a number's fraction digits
	stExp                          // after a number's 'e' or 'E'
	stExpSign                      // after the exponent's sign
	stExpDigits                    // inside the exponent's digits
)

// prefixScanner reads JSON text one byte at a time and fails at the first
// byte that no JSON object text could have there.
type prefixScanner struct {
	state   scanState
	stack   []byte // the open containers, '{' or '['
	key     bool   // the string being read is an object key
	literal string // the rest of the true, false or null being read
	hex     int    // hex digits still due in a '\u' escape
}

// isObjectPrefix reports whether s is the beginning of a JSON object text
// that stops before the object is closed.
func isObjectPrefix(s string) bool {
	sc, ok := scanObjectPrefix(s)
	return ok && sc.state != stBegin && sc.state != stDone
}

// scanObjectPrefix reads s and reports whether some JSON object text begins
// with it, along with where the scanner stopped.
func scanObjectPrefix(s string) (prefixScanner, bool) {
	var sc prefixScanner
	for i := 0; i < len(s); i++ {
		if !sc.step(s[i]) {
			return sc, false
		}
	}
	return sc, true
}

// isSpace reports whether c is JSON whitespace.
func isSpace(c byte) bool { return strings.IndexByte(jsonSpace, c) >= 0 }

// isDigit reports whether c is a decimal digit.
func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// isHex reports whether c is a hexadecimal digit.
func isHex(c byte) bool { return isDigit(c) || ('a' <= c && c <= 'f') || ('A' <= c && c <= 'F') }

// isEscape reports whether c may follow '\' in a string, 'u' aside.
func isEscape(c byte) bool { return strings.IndexByte(`"\/bfnrt`, c) >= 0 }

// step reads one byte and reports whether the text so far can still begin a
// JSON object.
func (sc *prefixScanner) step(c byte) bool {
	switch sc.state {
	case stBegin:
		if isSpace(c) {
			return true
		}
		return c == '{' && sc.open(c, stObjectFirst)
	case stObjectFirst, stKey:
		switch {
		case isSpace(c):
			return true
		case c == '"':
			sc.state, sc.key = stString, true
			return true
		case c == '}' && sc.state == stObjectFirst:
			return sc.close(c)
		}
		return false
	case stColon:
		if isSpace(c) {
			return true
		}
		if c == ':' {
			sc.state = stValue
			return true
		}
		return false
	case stValue, stArrayFirst:
		if isSpace(c) {
			return true
		}
		if c == ']' && sc.state == stArrayFirst {
			return sc.close(c)
		}
		return sc.beginValue(c)
	case stAfterValue:
		return sc.afterValue(c)
	case stDone:
		return isSpace(c)
	case stString:
		return sc.inString(c)
	case stEscape:
		switch {
		case isEscape(c):
			sc.state = stString
			return true
		case c == 'u':
			sc.state, sc.hex = stUnicode, 4
			return true
		}
		return false
	case stUnicode:
		if !isHex(c) {
			return false
		}
		if sc.hex--; sc.hex == 0 {
			sc.state = stString
		}
		return true
	case stLiteral:
		if sc.literal == "" || c != sc.literal[0] {
			return false
		}
		if sc.literal = sc.literal[1:]; sc.literal == "" {
			sc.state = stAfterValue
		}
		return true
	}
	return sc.inNumber(c)
}

// open pushes a container, unless that nests deeper than JSON allows.
func (sc *prefixScanner) open(c byte, next scanState) bool {
	if len(sc.stack) >= maxJSONDepth {
		return false
	}
	sc.stack = append(sc.stack, c)
	sc.state = next
	return true
}

// close pops the innermost container if c is its closing bracket.
func (sc *prefixScanner) close(c byte) bool {
	n := len(sc.stack)
	if n == 0 || (c == '}') != (sc.stack[n-1] == '{') {
		return false
	}
	sc.stack = sc.stack[:n-1]
	if n == 1 {
		sc.state = stDone
	} else {
		sc.state = stAfterValue
	}
	return true
}

// beginValue reads the first byte of a value.
func (sc *prefixScanner) beginValue(c byte) bool {
	switch {
	case c == '{':
		return sc.open(c, stObjectFirst)
	case c == '[':
		return sc.open(c, stArrayFirst)
	case c == '"':
		sc.state, sc.key = stString, false
	case c == '-':
		sc.state = stMinus
	case c == '0':
		sc.state = stZero
	case isDigit(c):
		sc.state = stInt
	case c == 't':
		sc.state, sc.literal = stLiteral, "rue"
	case c == 'f':
		sc.state, sc.literal = stLiteral, "alse"
	case c == 'n':
		sc.state, sc.literal = stLiteral, "ull"
	default:
		return false
	}
	return true
}

// afterValue reads the byte after a value: a separator or a closing bracket.
func (sc *prefixScanner) afterValue(c byte) bool {
	n := len(sc.stack)
	switch {
	case isSpace(c):
		return true
	case n == 0:
		return false
	case c == ',' && sc.stack[n-1] == '{':
		sc.state = stKey
		return true
	case c == ',':
		sc.state = stValue
		return true
	case c == '}' || c == ']':
		return sc.close(c)
	}
	return false
}

// inString reads a byte of a string; raw control characters are not allowed.
func (sc *prefixScanner) inString(c byte) bool {
	switch {
	case c == '"' && sc.key:
		sc.state = stColon
	case c == '"':
		sc.state = stAfterValue
	case c == '\\':
		sc.state = stEscape
	case c < 0x20:
		return false
	}
	return true
}

// inNumber reads a byte in one of the number states; a byte that ends a
// complete number is read again as the byte after a value.
func (sc *prefixScanner) inNumber(c byte) bool {
	switch sc.state {
	case stMinus:
		switch {
		case c == '0':
			sc.state = stZero
		case isDigit(c):
			sc.state = stInt
		default:
			return false
		}
		return true
	case stDot:
		if !isDigit(c) {
			return false
		}
		sc.state = stFrac
		return true
	case stExp:
		switch {
		case c == '+' || c == '-':
			sc.state = stExpSign
		case isDigit(c):
			sc.state = stExpDigits
		default:
			return false
		}
		return true
	case stExpSign:
		if !isDigit(c) {
			return false
		}
		sc.state = stExpDigits
		return true
	case stZero, stInt, stFrac, stExpDigits:
		switch {
		case isDigit(c) && sc.state != stZero:
			return true
		case c == '.' && (sc.state == stZero || sc.state == stInt):
			sc.state = stDot
			return true
		case (c == 'e' || c == 'E') && sc.state != stExpDigits:
			sc.state = stExp
			return true
		}
		sc.state = stAfterValue
		return sc.afterValue(c)
	}
	return false
}

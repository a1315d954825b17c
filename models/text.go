package models

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"unicode/utf8"

	gormschema "gorm.io/gorm/schema"
)

// Text that flows through a turn comes from the model, from files and from
// commands, so it may hold NUL bytes and invalid UTF-8. PostgreSQL text
// columns refuse both; SQLite keeps them. So that both databases store and
// return the same bytes, text columns go through a reversible escape at the
// store boundary (the "text" serializer and EncodeText / DecodeText):
//
//   - valid UTF-8 without NUL and without U+FDD0 is stored unchanged, so
//     ordinary text, and full-text search over it, is not affected;
//   - otherwise each NUL byte, each byte that is not part of valid UTF-8 and
//     each U+FDD0 (a noncharacter, reserved for internal use) is replaced by
//     an escape between two U+FDD0: U+FDD0 "0" U+FDD0 for a NUL byte,
//     U+FDD0 "x" and two lower-case hex digits U+FDD0 for an invalid byte,
//     U+FDD0 "e" U+FDD0 for a literal U+FDD0. The full-text indexes treat
//     U+FDD0 as a separator, so the words around an escape stay words.
//
// Decoding leaves a U+FDD0 that starts no escape as it is, so text stored
// before the escape existed reads back unchanged unless it held one of the
// escape sequences.

// escapeRune starts an escape in stored text.
const escapeRune = '\uFDD0'

// escapeSeq is escapeRune in UTF-8.
const escapeSeq = string(escapeRune)

// EncodeText returns the stored form of s: valid UTF-8 without NUL, from
// which DecodeText gives back s byte for byte.
func EncodeText(s string) string {
	if !needsEscape(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, "%sx%02x%s", escapeSeq, s[i], escapeSeq)
		case r == 0:
			b.WriteString(escapeSeq + "0" + escapeSeq)
		case r == escapeRune:
			b.WriteString(escapeSeq + "e" + escapeSeq)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// needsEscape reports whether s differs from its stored form.
func needsEscape(s string) bool {
	return !utf8.ValidString(s) || strings.IndexByte(s, 0) >= 0 || strings.Contains(s, escapeSeq)
}

// DecodeText returns the text whose stored form is s (see EncodeText).
func DecodeText(s string) string {
	if !strings.Contains(s, escapeSeq) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for {
		i := strings.Index(s, escapeSeq)
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:i])
		s = s[i:]
		rest := s[len(escapeSeq):]
		switch {
		case strings.HasPrefix(rest, "0"+escapeSeq):
			b.WriteByte(0)
			s = rest[1+len(escapeSeq):]
		case strings.HasPrefix(rest, "e"+escapeSeq):
			b.WriteString(escapeSeq)
			s = rest[1+len(escapeSeq):]
		case len(rest) >= 3 && rest[0] == 'x' && isLowerHex(rest[1]) && isLowerHex(rest[2]) &&
			strings.HasPrefix(rest[3:], escapeSeq):
			b.WriteByte(unhex(rest[1])<<4 | unhex(rest[2]))
			s = rest[3+len(escapeSeq):]
		default: // not an escape: keep it
			b.WriteString(escapeSeq)
			s = rest
		}
	}
}

func isLowerHex(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' }

func unhex(c byte) byte {
	if c <= '9' {
		return c - '0'
	}
	return c - 'a' + 10
}

func init() {
	gormschema.RegisterSerializer("text", textSerializer{})
	gormschema.RegisterSerializer("toolcalls", toolCallsSerializer{})
}

// textSerializer stores a string column in its escaped form.
type textSerializer struct{}

func (textSerializer) Scan(ctx context.Context, field *gormschema.Field, dst reflect.Value, dbValue any) error {
	s, err := dbString(dbValue)
	if err != nil {
		return fmt.Errorf("column %s: %w", field.DBName, err)
	}
	field.ReflectValueOf(ctx, dst).SetString(DecodeText(s))
	return nil
}

func (textSerializer) Value(_ context.Context, field *gormschema.Field, _ reflect.Value, fieldValue any) (any, error) {
	s, ok := fieldValue.(string)
	if !ok {
		return nil, fmt.Errorf("column %s: text serializer on a %T field", field.DBName, fieldValue)
	}
	return EncodeText(s), nil
}

// dbString is a text column's value as the driver returned it.
func dbString(v any) (string, error) {
	switch v := v.(type) {
	case nil:
		return "", nil
	case string:
		return v, nil
	case []byte:
		return string(v), nil
	}
	return "", fmt.Errorf("unexpected %T for a text column", v)
}

// toolCallsSerializer stores []ToolCall as JSON whose strings are in their
// escaped form: encoding/json would turn invalid UTF-8 into U+FFFD.
type toolCallsSerializer struct{}

func (toolCallsSerializer) Scan(ctx context.Context, field *gormschema.Field, dst reflect.Value, dbValue any) error {
	s, err := dbString(dbValue)
	if err != nil {
		return fmt.Errorf("column %s: %w", field.DBName, err)
	}
	var calls []ToolCall
	if s != "" {
		if err := json.Unmarshal([]byte(s), &calls); err != nil {
			return fmt.Errorf("column %s: %w", field.DBName, err)
		}
		for i := range calls {
			calls[i] = mapToolCall(calls[i], DecodeText)
		}
	}
	field.ReflectValueOf(ctx, dst).Set(reflect.ValueOf(calls))
	return nil
}

func (toolCallsSerializer) Value(_ context.Context, field *gormschema.Field, _ reflect.Value, fieldValue any) (any, error) {
	calls, ok := fieldValue.([]ToolCall)
	if !ok {
		return nil, fmt.Errorf("column %s: toolcalls serializer on a %T field", field.DBName, fieldValue)
	}
	if calls == nil {
		return nil, nil
	}
	stored := make([]ToolCall, len(calls))
	for i, c := range calls {
		stored[i] = mapToolCall(c, EncodeText)
	}
	b, err := json.Marshal(stored)
	if err != nil {
		return nil, fmt.Errorf("column %s: %w", field.DBName, err)
	}
	return string(b), nil
}

// mapToolCall applies f to every string of c.
func mapToolCall(c ToolCall, f func(string) string) ToolCall {
	return ToolCall{ID: f(c.ID), Type: f(c.Type), Function: FunctionCall{Name: f(c.Function.Name), Arguments: f(c.Function.Arguments)}}
}

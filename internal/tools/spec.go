package tools

import (
	"context"
	stdjson "encoding/json"
	"encoding/json/jsontext"
	"encoding/json/v2"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	openai "github.com/sashabaranov/go-openai"
)

// Spec declares a built-in tool in one place: its name, what the model is
// told, what the rest of the system needs to know of it (Meta), how it may
// be run, and the typed function that runs it. The JSON schema of its
// arguments is derived from A, a struct whose fields carry `json` names
// (",omitempty" marks an optional argument; every other one is required)
// and `jsonschema` descriptions; Schema may add what Go types cannot say
// (enums, bounds). A call's arguments are decoded strictly into A (see
// [Define]) before Run sees them.
//
// A tool's file declares it and adds it to the built-ins:
//
//	var _ = builtin(func(Services) Tool { return Define(Spec[wordCountArgs]{...}) })
type Spec[A any] struct {
	Name        string
	Description string
	Meta
	// Quick: the tool finishes in milliseconds on the worker's own
	// resources (see QuickTool).
	Quick bool
	// Idempotent: running the call twice is safe, so a call whose
	// outcome was lost may be run again rather than reported unknown.
	Idempotent bool
	// BoundsOwnOutput: Run bounds its result to the output cap itself
	// (see OutputBounder).
	BoundsOwnOutput bool
	// Schema adjusts the derived schema; nil leaves it as derived.
	Schema func(*jsonschema.Schema)
	Run    func(ctx context.Context, env Env, args A) (string, error)
}

// typed is the Tool a Spec defines.
type typed[A any] struct {
	spec     Spec[A]
	def      openai.Tool
	schema   *jsonschema.Schema
	resolved *jsonschema.Resolved
}

// Define makes the Tool a Spec declares. It panics when A has no schema
// (a type JSON cannot hold) or the spec lacks a name or a Run: mistakes of
// the tool's own file, which its tests catch at once.
func Define[A any](s Spec[A]) Tool {
	if s.Name == "" || s.Run == nil {
		panic(fmt.Sprintf("tools: the spec of %q needs a name and a Run", s.Name))
	}
	schema, err := jsonschema.For[A](nil)
	if err != nil {
		panic(fmt.Sprintf("tools: %s's arguments: %v", s.Name, err))
	}
	if schema.Type != "object" {
		panic(fmt.Sprintf("tools: %s's arguments must be a struct, not %s", s.Name, schema.Type))
	}
	if schema.Required == nil {
		schema.Required = []string{}
	}
	if schema.Properties == nil {
		schema.Properties = map[string]*jsonschema.Schema{}
	}
	dropNull(schema)
	if s.Schema != nil {
		s.Schema(schema)
	}
	resolved, err := schema.Resolve(nil)
	if err != nil {
		panic(fmt.Sprintf("tools: %s's schema: %v", s.Name, err))
	}
	raw, err := stdjson.Marshal(schema)
	if err != nil {
		panic(fmt.Sprintf("tools: %s's schema: %v", s.Name, err))
	}
	return &typed[A]{spec: s, schema: schema, resolved: resolved, def: functionTool(s.Name, s.Description, string(raw))}
}

// dropNull takes null out of the types the derivation gives a slice or a
// map ("type": ["null", "array"]): a null argument counts as absent, and
// some providers refuse a list of types.
func dropNull(s *jsonschema.Schema) {
	if s == nil {
		return
	}
	if len(s.Types) == 2 && s.Types[0] == "null" {
		s.Type, s.Types = s.Types[1], nil
	}
	for _, p := range s.Properties {
		dropNull(p)
	}
	dropNull(s.Items)
	dropNull(s.AdditionalProperties)
}

// Name implements Tool.
func (t *typed[A]) Name() string { return t.spec.Name }

// Definition implements Tool.
func (t *typed[A]) Definition() openai.Tool { return t.def }

// Idempotent implements Tool.
func (t *typed[A]) Idempotent() bool { return t.spec.Idempotent }

// Quick implements QuickTool.
func (t *typed[A]) Quick() bool { return t.spec.Quick }

// Meta implements Described.
func (t *typed[A]) Meta() Meta { return t.spec.Meta }

// BoundsOwnOutput implements OutputBounder.
func (t *typed[A]) BoundsOwnOutput() bool { return t.spec.BoundsOwnOutput }

// decode reads a call's arguments as Run does.
func (t *typed[A]) decode(raw stdjson.RawMessage) (A, error) {
	return decodeArgs[A](t.spec.Name, raw, t.schema, t.resolved)
}

// Run implements Tool: it decodes the arguments, then runs the spec's Run.
func (t *typed[A]) Run(ctx context.Context, env Env, raw stdjson.RawMessage) (string, error) {
	a, err := t.decode(raw)
	if err != nil {
		return "", err
	}
	return t.spec.Run(ctx, env, a)
}

// decodeArgs reads a call's arguments into A, strictly: the arguments
// must be one JSON object (empty and null count as {}); a repeated name,
// also one repeated but for case, an unknown name or a missing required
// argument is refused, each naming the argument; a null member counts as
// absent. Models' common looseness is taken where it is unambiguous: an
// integer or a boolean may come as a string holding one, and a whole
// number may be written with a fraction of zero. What the values must
// further be (an enum, a bound) is checked against the schema. Every
// refusal wraps ErrInvalidArguments.
func decodeArgs[A any](tool string, raw stdjson.RawMessage, schema *jsonschema.Schema, resolved *jsonschema.Resolved) (A, error) {
	var zero A
	a, err := parseArgs(tool, raw)
	if err != nil {
		return zero, err
	}
	for _, name := range sortedKeys(a.fields) {
		_, given := a.value(name)
		if _, known := schema.Properties[name]; !known && given {
			for known := range schema.Properties {
				if strings.EqualFold(name, known) {
					return zero, a.errorf("unknown argument %q; did you mean %q?", name, known)
				}
			}
			return zero, a.errorf("unknown argument %q; the arguments are %s", name, argumentList(schema))
		}
	}
	for _, name := range schema.Required {
		if _, ok := a.value(name); !ok {
			return zero, a.errorf("missing required argument %q", name)
		}
	}
	present := map[string]jsontext.Value{}
	for name := range a.fields {
		if v, ok := a.value(name); ok {
			present[name] = jsontext.Value(v)
		}
	}
	// Text the old decoder took (a lone surrogate escape, invalid UTF-8)
	// is taken, as U+FFFD.
	loose := jsontext.AllowInvalidUTF8(true)
	obj, err := json.Marshal(present, json.Deterministic(true), loose)
	if err != nil {
		return zero, a.errorf("%v", err)
	}
	var out A
	if err := json.Unmarshal(obj, &out, json.RejectUnknownMembers(true), json.WithUnmarshalers(lenient), loose); err != nil {
		return zero, a.errorf("%s", semanticError(err))
	}
	// The schema's own rules (enums, bounds) hold for the value decoded.
	normal, err := json.Marshal(out, loose)
	if err != nil {
		return zero, a.errorf("%v", err)
	}
	var instance map[string]any
	if err := json.Unmarshal(normal, &instance, loose); err != nil {
		return zero, a.errorf("%v", err)
	}
	for name := range instance {
		if _, given := present[name]; !given {
			delete(instance, name) // an optional argument not given is not checked
		}
	}
	for _, name := range sortedKeys(instance) {
		prop, given := schema.Properties[name], string(present[name])
		if len(prop.Enum) > 0 && !slices.Contains(prop.Enum, instance[name]) {
			return zero, a.errorf("%q must be one of %s, got %s", name, enumList(prop.Enum), given)
		}
		if n, ok := instance[name].(float64); ok {
			if prop.Minimum != nil && n < *prop.Minimum {
				return zero, a.errorf("%q must be at least %v, got %s", name, *prop.Minimum, given)
			}
			if prop.Maximum != nil && n > *prop.Maximum {
				return zero, a.errorf("%q must be at most %v, got %s", name, *prop.Maximum, given)
			}
		}
	}
	if err := resolved.Validate(instance); err != nil {
		return zero, a.errorf("%s", schemaError(err))
	}
	return out, nil
}

// enumList names an enum's values for an error: "a, b or c".
func enumList(enum []any) string {
	words := make([]string, len(enum))
	for i, v := range enum {
		words[i] = fmt.Sprint(v)
	}
	if len(words) == 1 {
		return words[0]
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}

// schemaError words a schema validation error by the argument it is about:
// "validating /properties/limit: minimum: -1 is less than 0" is
// `"limit": minimum: -1 is less than 0`.
func schemaError(err error) string {
	msg := strings.TrimPrefix(err.Error(), "validating root: ")
	if rest, ok := strings.CutPrefix(msg, "validating /properties/"); ok {
		if name, why, ok := strings.Cut(rest, ": "); ok {
			return strconv.Quote(strings.ReplaceAll(name, "/", ".")) + ": " + why
		}
	}
	return msg
}

// lenient takes an integer or a boolean written as a JSON string, and a
// whole number written with a zero fraction, as models often send them.
var lenient = json.JoinUnmarshalers(
	json.UnmarshalFromFunc(func(dec *jsontext.Decoder, v *int) error {
		text, err := scalarText(dec)
		if err != nil {
			return err
		}
		n, err := wholeNumber(text)
		if err != nil {
			return err
		}
		*v = n
		return nil
	}),
	json.UnmarshalFromFunc(func(dec *jsontext.Decoder, v *bool) error {
		text, err := scalarText(dec)
		if err != nil {
			return err
		}
		switch strings.ToLower(text) {
		case "true":
			*v = true
		case "false":
			*v = false
		default:
			return fmt.Errorf("must be a boolean, got %s", strconv.Quote(text))
		}
		return nil
	}),
)

// scalarText reads the next value as text: a string's contents, or the
// literal of a number or a boolean; an array or an object is refused.
func scalarText(dec *jsontext.Decoder) (string, error) {
	v, err := dec.ReadValue()
	if err != nil {
		return "", err
	}
	switch v.Kind() {
	case '"':
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return "", err
		}
		return strings.TrimSpace(s), nil
	case '0', 't', 'f':
		return string(v), nil
	}
	return "", fmt.Errorf("got %s", jsonKind(v))
}

// wholeNumber reads an integer within 32 bits, which may be written as a
// float with no fraction ("3.0", "3e2").
func wholeNumber(text string) (int, error) {
	if n, err := strconv.Atoi(text); err == nil && n <= math.MaxInt32 && n >= math.MinInt32 {
		return n, nil
	}
	f, err := strconv.ParseFloat(text, 64)
	switch {
	case err != nil || math.IsNaN(f) || math.IsInf(f, 0):
		return 0, fmt.Errorf("must be an integer, got %s", strconv.Quote(text))
	case f != math.Trunc(f):
		return 0, fmt.Errorf("must be a whole number, got %s", text)
	case f > math.MaxInt32 || f < math.MinInt32:
		return 0, fmt.Errorf("is out of range: %s", text)
	}
	return int(f), nil
}

// semanticError words a decoding error by the argument it is about:
// `"offset" must be an integer, got a string`.
func semanticError(err error) string {
	var se *json.SemanticError
	if !errors.As(err, &se) {
		return err.Error()
	}
	where := strconv.Quote(pointerPath(string(se.JSONPointer)))
	if se.Err != nil {
		msg := se.Err.Error()
		if strings.HasPrefix(msg, "must ") || strings.HasPrefix(msg, "is ") {
			return where + " " + msg
		}
		if strings.HasPrefix(msg, "got ") {
			return where + " must be " + goKind(se.GoType) + ", " + msg
		}
	}
	if se.JSONKind != 0 && se.GoType != nil {
		return fmt.Sprintf("%s must be %s, got %s", where, goKind(se.GoType), jsonKind([]byte{byte(se.JSONKind)}))
	}
	return where + ": " + err.Error()
}

// goKind names what a Go type takes, in JSON's words.
func goKind(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Struct, reflect.Map:
		return "an object"
	}
	return t.String()
}

// argumentList names a schema's arguments for an error: "a, b and c".
func argumentList(schema *jsonschema.Schema) string {
	names := slices.Clone(schema.PropertyOrder)
	if len(names) == 0 {
		return "none: call it with {}"
	}
	for i, n := range names {
		names[i] = strconv.Quote(n)
	}
	if len(names) == 1 {
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// sortedKeys are m's keys in order, so the first unknown argument named is
// the same every time.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// invalidArgs is a refusal of a call's arguments that Run finds.
func invalidArgs(tool, format string, v ...any) error {
	return fmt.Errorf("%w for %s: %s", ErrInvalidArguments, tool, fmt.Sprintf(format, v...))
}

// requirePath refuses a blank "path" argument.
func requirePath(tool, path string) error {
	if strings.TrimSpace(path) == "" {
		return invalidArgs(tool, `"path" must not be empty`)
	}
	return nil
}

// pointerPath writes a JSON pointer as a path: /todos/0/id is todos[0].id.
func pointerPath(p string) string {
	var b strings.Builder
	for i, seg := range strings.Split(strings.TrimPrefix(p, "/"), "/") {
		if _, err := strconv.Atoi(seg); err == nil && i > 0 {
			b.WriteString("[" + seg + "]")
			continue
		}
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(seg)
	}
	return b.String()
}

// idString is an identifier argument that models sometimes send as a
// number: the number's JSON text is taken.
type idString string

// UnmarshalJSONFrom implements json.UnmarshalerFrom.
func (s *idString) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	tok, err := dec.ReadToken()
	if err != nil {
		return err
	}
	switch tok.Kind() {
	case '"':
		*s = idString(tok.String())
	case '0':
		*s = idString(tok.String())
	default:
		return fmt.Errorf("must be a string, got %s", jsonKind([]byte{byte(tok.Kind())}))
	}
	return nil
}

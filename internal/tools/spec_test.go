package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

type specArgs struct {
	Path   string   `json:"path" jsonschema:"The file."`
	Limit  int      `json:"limit,omitempty" jsonschema:"At most this many."`
	Exact  bool     `json:"exact,omitempty"`
	Mode   string   `json:"mode,omitempty"`
	Labels []string `json:"labels,omitempty"`
}

func specTool() Tool {
	return Define(Spec[specArgs]{
		Name: "spec_probe", Description: "A probe.", Meta: Meta{Toolset: "file"}, Quick: true, Idempotent: true,
		Schema: func(s *jsonschema.Schema) {
			s.Properties["mode"].Enum = []any{"fast", "slow"}
			s.Properties["limit"].Minimum = new(float64)
		},
		Run: func(_ context.Context, _ Env, a specArgs) (string, error) {
			return fmt.Sprintf("%s|%d|%v|%s|%s", a.Path, a.Limit, a.Exact, a.Mode, strings.Join(a.Labels, ",")), nil
		},
	})
}

// TestSpecSchema: the schema is derived from the argument struct, in its
// field order, with the spec's additions, and is byte-stable.
func TestSpecSchema(t *testing.T) {
	t.Parallel()
	def := specTool().Definition()
	got, _ := json.Marshal(def.Function.Parameters)
	want := `{"type":"object","properties":{"path":{"type":"string","description":"The file."},"limit":{"type":"integer","description":"At most this many.","minimum":0},"exact":{"type":"boolean"},"mode":{"type":"string","enum":["fast","slow"]},"labels":{"type":"array","items":{"type":"string"}}},"required":["path"],"additionalProperties":false}`
	if string(got) != want {
		t.Errorf("schema:\n%s\nwant:\n%s", got, want)
	}
	again, _ := json.Marshal(specTool().Definition().Function.Parameters)
	if string(again) != string(got) {
		t.Error("two definitions of one spec differ")
	}
	if def.Function.Name != "spec_probe" || def.Function.Description != "A probe." {
		t.Errorf("definition %+v", def.Function)
	}
}

// TestSpecDecoding: a call's arguments are decoded strictly, each refusal
// naming the argument; the looseness models show is taken where it is
// unambiguous.
func TestSpecDecoding(t *testing.T) {
	t.Parallel()
	tool := specTool()
	for _, tt := range []struct {
		args, want, err string
	}{
		{args: `{"path":"a.txt"}`, want: "a.txt|0|false||"},
		{args: `{"path":"a.txt","limit":5,"exact":true,"mode":"fast","labels":["x","y"]}`, want: "a.txt|5|true|fast|x,y"},
		{args: `{"path":"a.txt","limit":"7","exact":"true"}`, want: "a.txt|7|true||"},
		{args: `{"path":"a.txt","limit":3.0}`, want: "a.txt|3|false||"},
		{args: `{"path":"a.txt","limit":1e3,"exact":"False"}`, want: "a.txt|1000|false||"},
		{args: `{"path":"a.txt","limit":null,"mode":null}`, want: "a.txt|0|false||"},
		{args: ` {"path":"a.txt"} `, want: "a.txt|0|false||"},
		{args: `{"path":"a.txt","color":null}`, want: "a.txt|0|false||"},
		{args: `{"path":"\ud83d.txt"}`, want: "\uFFFD.txt|0|false||"},
		{args: `{"path":"a","path":"b"}`, err: "path"},
		{args: `{"path":"a","PATH":"b"}`, err: "path"},
		{args: `{"path":"a","Path":"b"}`, err: "Path"},
		{args: `{"path":"a","color":"red"}`, err: `unknown argument "color"; the arguments are "path", "limit", "exact", "mode" and "labels"`},
		{args: `{"limit":2}`, err: `missing required argument "path"`},
		{args: ``, err: `missing required argument "path"`},
		{args: `null`, err: `missing required argument "path"`},
		{args: `{"path":7}`, err: `"path" must be a string, got a number`},
		{args: `{"path":"a","limit":"many"}`, err: `"limit" must be an integer, got "many"`},
		{args: `{"path":"a","limit":2.5}`, err: `"limit" must be a whole number, got 2.5`},
		{args: `{"path":"a","limit":1e12}`, err: `"limit" is out of range`},
		{args: `{"path":"a","limit":-1}`, err: `"limit" must be at least 0, got -1`},
		{args: `{"path":"a","exact":"yes"}`, err: `"exact" must be a boolean, got "yes"`},
		{args: `{"path":"a","exact":[true]}`, err: `"exact" must be a boolean, got an array`},
		{args: `{"path":"a","mode":"medium"}`, err: `"mode" must be one of fast or slow, got "medium"`},
		{args: `{"path":"a","labels":"x"}`, err: `"labels" must be an array, got a string`},
		{args: `{"path":"a","labels":[1]}`, err: `"labels[0]" must be a string, got a number`},
		{args: `["a.txt"]`, err: "must be a JSON object, got an array"},
		{args: `{"path":`, err: "malformed JSON"},
	} {
		got, err := tool.Run(context.Background(), Env{}, json.RawMessage(tt.args))
		if tt.err == "" {
			if err != nil || got != tt.want {
				t.Errorf("%s: %q, %v; want %q", tt.args, got, err, tt.want)
			}
			continue
		}
		if err == nil || !errors.Is(err, ErrInvalidArguments) || !strings.Contains(err.Error(), tt.err) {
			t.Errorf("%s: %q, %v; want an invalid-arguments error holding %q", tt.args, got, err, tt.err)
		}
		if err != nil && !strings.HasPrefix(err.Error(), "invalid arguments for spec_probe: ") {
			t.Errorf("%s: %v does not say which tool", tt.args, err)
		}
	}
}

// TestSpecThroughRegistry: a spec's tool runs through the registry like
// any other, quick and idempotent as declared, its Meta known.
func TestSpecThroughRegistry(t *testing.T) {
	t.Parallel()
	r, err := NewRegistry(specTool())
	if err != nil {
		t.Fatal(err)
	}
	if !r.Quick("spec_probe") {
		t.Error("not quick")
	}
	tool, _ := r.Lookup("spec_probe")
	if !tool.Idempotent() || MetaOf(tool).Toolset != "file" {
		t.Errorf("idempotent %v, meta %+v", tool.Idempotent(), MetaOf(tool))
	}
	res := r.Call(context.Background(), Env{}, Call{ID: "c1", Name: "spec_probe", Arguments: `{"path":"p"}`})
	if res.IsError || res.Content != "p|0|false||" {
		t.Errorf("result %+v", res)
	}
	res = r.Call(context.Background(), Env{}, Call{ID: "c2", Name: "spec_probe", Arguments: `{}`})
	if !res.IsError || !strings.Contains(res.Content, `missing required argument \"path\"`) && !strings.Contains(res.Content, `missing required argument "path"`) {
		t.Errorf("result %+v", res)
	}
}

package approval

import (
	"encoding/json"
	"reflect"
	"testing"
)

func TestGrantsWith(t *testing.T) {
	tests := []struct {
		name   string
		g      Grants
		choice Choice
		rule   string
		want   Grants
	}{
		{"session into empty", Grants{}, Session, "git_clean", Grants{Session: []string{"git_clean"}}},
		{"always into empty", Grants{}, Always, "git_clean", Grants{Always: []string{"git_clean"}}},
		{"sorted insert", Grants{Session: []string{"a", "c"}}, Session, "b", Grants{Session: []string{"a", "b", "c"}}},
		{"duplicate", Grants{Always: []string{"x"}}, Always, "x", Grants{Always: []string{"x"}}},
		{"once adds nothing", Grants{Session: []string{"a"}}, Once, "b", Grants{Session: []string{"a"}}},
		{"deny adds nothing", Grants{}, Deny, "b", Grants{}},
		{"unknown choice", Grants{}, Choice("forever"), "b", Grants{}},
		{"empty rule", Grants{}, Session, "", Grants{}},
		{"normalizes stored lists", Grants{Always: []string{"z", "a", "z", ""}}, Session, "m",
			Grants{Session: []string{"m"}, Always: []string{"a", "z"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.g.With(tt.choice, tt.rule); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("With(%q, %q) = %+v, want %+v", tt.choice, tt.rule, got, tt.want)
			}
		})
	}
}

func TestGrantsWithCopyOnWrite(t *testing.T) {
	backing := make([]string, 2, 10) // spare capacity an append could reuse
	backing[0], backing[1] = "a", "c"
	g := Grants{Session: backing, Always: []string{"x"}}
	g2 := g.With(Session, "b")
	g3 := g.With(Session, "d")
	if !reflect.DeepEqual(g.Session, []string{"a", "c"}) || !reflect.DeepEqual(backing[:3], []string{"a", "c", ""}) {
		t.Fatalf("receiver modified: %+v", g)
	}
	if !reflect.DeepEqual(g2.Session, []string{"a", "b", "c"}) || !reflect.DeepEqual(g3.Session, []string{"a", "c", "d"}) {
		t.Fatalf("results share memory: %+v %+v", g2, g3)
	}
	g2.Always[0] = "changed"
	if g.Always[0] != "x" {
		t.Fatalf("result shares Always with the receiver")
	}
}

func TestGrantsAllows(t *testing.T) {
	g := Grants{}.With(Session, RuleGitClean).With(Always, RuleRecursiveDelete).With(Always, RuleRootDelete)
	tests := []struct {
		a    Assessment
		want bool
	}{
		{Assessment{}, true},
		{Assess("ls"), true},
		{Assess("git clean -fd"), true},
		{Assess("rm -rf ./build"), true},
		{Assess("git reset --hard"), false},
		{Assess("rm -rf /"), false}, // Blocked even though its rule was granted
		{Assessment{Risk: Blocked, Rule: RuleRecursiveDelete}, false},
		{Assessment{Risk: Dangerous}, false},
		{Assessment{Risk: Risk(9), Rule: RuleGitClean}, false},
	}
	for _, tt := range tests {
		if got := g.Allows(tt.a); got != tt.want {
			t.Errorf("Allows(%+v) = %v, want %v", tt.a, got, tt.want)
		}
	}
	if (Grants{}).Allows(Assess("git clean -f")) {
		t.Error("empty grants allow a dangerous command")
	}
}

func TestGrantsJSON(t *testing.T) {
	b, err := json.Marshal(Grants{}.With(Always, "b").With(Always, "a"))
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != `{"always":["a","b"]}` {
		t.Fatalf("json = %s", b)
	}
	var g Grants
	if err := json.Unmarshal([]byte(`{"session":["git_clean"]}`), &g); err != nil {
		t.Fatal(err)
	}
	if !g.Allows(Assess("git clean -f")) {
		t.Fatal("decoded grants do not allow their rule")
	}
}

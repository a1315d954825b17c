package approval

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/talaria-agent/talaria/internal/turnapi"
)

func TestGrantsWith(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		g      turnapi.Grants
		choice turnapi.ApprovalChoice
		rule   string
		want   turnapi.Grants
	}{
		{"session into empty", turnapi.Grants{}, turnapi.ChoiceSession, "git_clean", turnapi.Grants{Session: []string{"git_clean"}}},
		{"always into empty", turnapi.Grants{}, turnapi.ChoiceAlways, "git_clean", turnapi.Grants{Always: []string{"git_clean"}}},
		{"sorted insert", turnapi.Grants{Session: []string{"a", "c"}}, turnapi.ChoiceSession, "b", turnapi.Grants{Session: []string{"a", "b", "c"}}},
		{"duplicate", turnapi.Grants{Always: []string{"x"}}, turnapi.ChoiceAlways, "x", turnapi.Grants{Always: []string{"x"}}},
		{"once adds nothing", turnapi.Grants{Session: []string{"a"}}, turnapi.ChoiceOnce, "b", turnapi.Grants{Session: []string{"a"}}},
		{"deny adds nothing", turnapi.Grants{}, turnapi.ChoiceDeny, "b", turnapi.Grants{}},
		{"unknown choice", turnapi.Grants{}, turnapi.ApprovalChoice("forever"), "b", turnapi.Grants{}},
		{"empty rule", turnapi.Grants{}, turnapi.ChoiceSession, "", turnapi.Grants{}},
		{"normalizes stored lists", turnapi.Grants{Always: []string{"z", "a", "z", ""}}, turnapi.ChoiceSession, "m",
			turnapi.Grants{Session: []string{"m"}, Always: []string{"a", "z"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := tt.g.With(tt.choice, tt.rule); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("With(%q, %q) = %+v, want %+v", tt.choice, tt.rule, got, tt.want)
			}
		})
	}
}

func TestGrantsWithCopyOnWrite(t *testing.T) {
	t.Parallel()
	backing := make([]string, 2, 10) // spare capacity an append could reuse
	backing[0], backing[1] = "a", "c"
	g := turnapi.Grants{Session: backing, Always: []string{"x"}}
	g2 := g.With(turnapi.ChoiceSession, "b")
	g3 := g.With(turnapi.ChoiceSession, "d")
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
	t.Parallel()
	g := turnapi.Grants{}.
		With(turnapi.ChoiceSession, Assess("git clean -fd").GrantKey()).
		With(turnapi.ChoiceAlways, Assess("rm -rf ./build").GrantKey()).
		With(turnapi.ChoiceAlways, RuleRootDelete).
		With(turnapi.ChoiceAlways, RuleGitResetHard)
	tests := []struct {
		name string
		a    turnapi.Assessment
		want bool
	}{
		{"zero assessment is safe", turnapi.Assessment{}, true},
		{"safe", Assess("ls"), true},
		{"granted pattern", Assess("git clean -fd"), true},
		{"same pattern, other spelling", Assess("git clean -d -f"), true},
		{"granted rm", Assess("rm -rf ./build"), true},
		{"other target", Assess("rm -rf ./src"), false},
		{"old rule grant does not cover a new assessment", Assess("git reset --hard"), false},
		{"blocked even though its rule was granted", Assess("rm -rf /"), false},
		{"blocked", turnapi.Assessment{Risk: turnapi.RiskBlocked, Rule: RuleRecursiveDelete}, false},
		{"dangerous without rule or pattern", turnapi.Assessment{Risk: turnapi.RiskDangerous}, false},
		{"unknown risk", turnapi.Assessment{Risk: turnapi.Risk(9), Rule: RuleGitClean}, false},
		{"recorded assessment without pattern matches its rule", turnapi.Assessment{Risk: turnapi.RiskDangerous, Rule: RuleGitResetHard}, true},
		{"recorded assessment of another rule", turnapi.Assessment{Risk: turnapi.RiskDangerous, Rule: RuleGitClean}, false},
	}
	for _, tt := range tests {
		if got := g.Allows(tt.a); got != tt.want {
			t.Errorf("%s: Allows(%+v) = %v, want %v", tt.name, tt.a, got, tt.want)
		}
	}
	if (turnapi.Grants{}).Allows(Assess("git clean -f")) {
		t.Error("empty grants allow a dangerous command")
	}
}

// TestGrantPerCommand: a grant covers the command it was given for, spelt
// any equivalent way, and nothing else.
func TestGrantPerCommand(t *testing.T) {
	t.Parallel()
	tests := []struct {
		granted string
		cmd     string
		want    bool
	}{
		{"rm -rf ./build", "rm -rf ./build", true},
		{"rm -rf ./build", "rm -fr ./build/", true},
		{"rm -rf ./build", "rm -r -f build", true},
		{"rm -rf ./build", "rm -f -r ./build/.", true},
		{"rm -rf ./build", "sudo rm -rf ./build", false},
		{"sudo rm -rf ./build", "sudo rm -rf build/", true},
		{"rm -rf ./build", "cd .. && rm -rf ./build", false},
		{"rm -rf ./build", "cd '/tmp/w' && rm -rf ./build", false},
		{"cd '/tmp/w' && rm -rf ./build", "cd /tmp/w && rm -rf build", true},
		{"git clean -dfx", "git -C ~ clean -fdx", false},
		{"git clean -dfx", "env -C / git clean -fdx", false},
		{"rm -rf ./build", "ssh host rm -rf ./build", false},
		{"xargs rm -rf < list", "find . -name x | xargs rm -rf", false},
		{"git clean -fdx", "GIT_WORK_TREE=~ git clean -fdx", false},
		{"cat x | sh", "cd /tmp && cat x | sh", false},
		{"cd ~ && tar -xf a.tar", "cd ~ && tar -xf b.tar", false},
		{"find . -name '*.pyc' -delete", "find . -name '*.pyc' -delete", true},
		{"find . -name x -exec rm -rf {} +", "find . -name y -exec rm -rf {} +", false},
		{"find . -name '*.pyc' -delete", "find . -name '*.o' -delete", false},
		{"rm -rf ./build", "rm -rf ./src", false},
		{"rm -rf ./build", "find / -delete", false},
		{"rm -rf ./build", "rm -rf ~/.ssh", false},
		{"rm -rf ./build", "rm -rf ./build ./src", false},
		{"rm -rf ./build", "rm -rf ./build; git reset --hard", false},
		{"rm -rf ./build", "rm -r ./build", false},
		{"find ./victim -delete", "find ./victim -delete", true},
		{"find ./victim -delete", "find . -delete", false},
		{"git push --force origin main", "git push --force origin dev", false},
		{"rm -rf ./a; rm -rf ./b", "rm -rf ./b; rm -rf ./a", true},
		{"rm -rf ./a; rm -rf ./b", "rm -rf ./a", false},
		{"curl -fsSL https://x.sh | sh", "curl -fsSL https://y.sh | sh", false},
		{"echo x >> ~/.bashrc", "echo x >>~/.bashrc", true},
		{"echo x >> ~/.bashrc", "echo y >> ~/.bashrc", false},
		{"cp a /etc/x", "cp b /etc/x", false},
		{"git reset --hard", "git reset --hard", true},
		{"echo x >> ~/.bashrc", "echo y >> ~/.zshrc", false},
		{"$X -rf ./build", "$Y -rf ./build", false},
	}
	for _, tt := range tests {
		granted := AssessIn(tt.granted, Where{})
		if granted.Risk != turnapi.RiskDangerous || granted.Pattern == "" {
			t.Fatalf("Assess(%q) = %+v, want dangerous with a pattern", tt.granted, granted)
		}
		for _, c := range []turnapi.ApprovalChoice{turnapi.ChoiceSession, turnapi.ChoiceAlways} {
			g := turnapi.Grants{}.With(c, granted.GrantKey())
			if got := g.Allows(AssessIn(tt.cmd, Where{})); got != tt.want {
				t.Errorf("%s grant for %q (key %q): Allows(%q) = %v (pattern %q), want %v",
					c, tt.granted, granted.GrantKey(), tt.cmd, got, AssessIn(tt.cmd, Where{}).Pattern, tt.want)
			}
		}
	}
}

func TestGrantKey(t *testing.T) {
	t.Parallel()
	tests := []struct {
		a    turnapi.Assessment
		want string
	}{
		{Assess("rm -rf ./build"), "cmd:rm -rf ./build"},
		{Assess("rm -fr build/"), "cmd:rm -rf ./build"},
		{Assess("find ./victim -delete"), "cmd:find ./victim -delete"},
		{turnapi.Assessment{Risk: turnapi.RiskDangerous, Rule: RuleGitClean}, RuleGitClean},
		{turnapi.Assessment{}, ""},
	}
	for _, tt := range tests {
		if got := tt.a.GrantKey(); got != tt.want {
			t.Errorf("GrantKey(%+v) = %q, want %q", tt.a, got, tt.want)
		}
	}
}

func TestGrantsJSON(t *testing.T) {
	t.Parallel()
	b, err := json.Marshal(turnapi.Grants{}.With(turnapi.ChoiceAlways, "b").With(turnapi.ChoiceAlways, "a"))
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != `{"always":["a","b"]}` {
		t.Fatalf("json = %s", b)
	}
	var g turnapi.Grants
	if err := json.Unmarshal([]byte(`{"session":["git_clean","cmd:git clean -f"]}`), &g); err != nil {
		t.Fatal(err)
	}
	if !g.Allows(Assess("git clean -f")) {
		t.Fatal("decoded grants do not allow their pattern")
	}
	if !g.Allows(turnapi.Assessment{Risk: turnapi.RiskDangerous, Rule: RuleGitClean}) {
		t.Fatal("decoded grants do not allow their rule for a recorded assessment")
	}
	if g.Allows(Assess("git clean -fdx")) {
		t.Fatal("a pattern grant covers another command")
	}
	a := Assess("rm -rf ./build")
	b, err = json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	var back turnapi.Assessment
	if err := json.Unmarshal(b, &back); err != nil || back != a {
		t.Fatalf("assessment JSON round trip: %s → %+v (%v)", b, back, err)
	}
	if b, _ := json.Marshal(turnapi.Assessment{Risk: turnapi.RiskDangerous, Rule: "x"}); strings.Contains(string(b), "Pattern") {
		t.Fatalf("empty pattern is encoded: %s", b)
	}
}

func TestPatternBounded(t *testing.T) {
	t.Parallel()
	long := "rm -rf ./" + strings.Repeat("é", 400)
	a := Assess(long)
	b := Assess(long + "x")
	if a.Risk != turnapi.RiskDangerous || len(a.Pattern) > MaxPattern || len(a.GrantKey()) > MaxGrantKey {
		t.Fatalf("assessment = %+v (pattern %d bytes)", a, len(a.Pattern))
	}
	if !utf8.ValidString(a.Pattern) {
		t.Fatalf("pattern cut inside a character: %q", a.Pattern)
	}
	if a.Pattern == b.Pattern {
		t.Fatal("two long commands that differ share a pattern")
	}
	if Assess(long).Pattern != a.Pattern {
		t.Fatal("the pattern of a long command is not stable")
	}
	if p := Assess("rm -rf ./build").Pattern; p != "rm -rf ./build" && len(p) > 40 {
		t.Fatalf("a short pattern was digested: %q", p)
	}
}

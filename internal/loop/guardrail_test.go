package loop

import (
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// guardStep is one call in a guardrail scenario: the verdict expected before it
// runs, then its outcome.
type guardStep struct {
	args   string
	want   Verdict
	failed bool
	digest string
}

// runGuardSteps plays steps for read_file and returns the final state.
func runGuardSteps(t *testing.T, limits GuardrailLimits, steps []guardStep) GuardrailState {
	t.Helper()
	var st GuardrailState
	for i, s := range steps {
		call := ToolCall{ID: "c" + strconv.Itoa(i), Name: "read_file", Arguments: s.args}
		if got := CheckCall(limits, st, call); got.Verdict != s.want {
			t.Fatalf("guardStep %d (%s): verdict %v (%q), want %v", i, s.args, got.Verdict, got.Reason, s.want)
		}
		st = Observe(st, call, s.failed, s.digest)
	}
	return st
}

const guardPathA = `{"path":"a.txt"}`
const guardPathB = `{"path":"b.txt"}`

func TestGuardrailScenarios(t *testing.T) {
	t.Parallel()
	fail := func(args string, want Verdict) guardStep {
		return guardStep{args: args, want: want, failed: true, digest: "err"}
	}
	ok := func(args, digest string, want Verdict) guardStep {
		return guardStep{args: args, want: want, digest: digest}
	}
	tests := []struct {
		name   string
		limits GuardrailLimits
		steps  []guardStep
	}{
		{"failures warn then halt", GuardrailLimits{}, []guardStep{
			fail(guardPathA, Allow), fail(guardPathA, Allow), fail(guardPathA, Warn), fail(guardPathA, Warn), fail(guardPathA, Halt),
		}},
		{"success resets the failure count", GuardrailLimits{}, []guardStep{
			fail(guardPathA, Allow), fail(guardPathA, Allow), ok(guardPathA, "x", Warn), fail(guardPathA, Allow), fail(guardPathA, Allow), fail(guardPathA, Warn),
		}},
		{"identical results warn then halt", GuardrailLimits{}, []guardStep{
			ok(guardPathA, "x", Allow), ok(guardPathA, "x", Allow), ok(guardPathA, "x", Allow), ok(guardPathA, "x", Warn), ok(guardPathA, "x", Warn), ok(guardPathA, "x", Halt),
		}},
		{"a different result restarts the repeat count", GuardrailLimits{}, []guardStep{
			ok(guardPathA, "x", Allow), ok(guardPathA, "x", Allow), ok(guardPathA, "y", Allow), ok(guardPathA, "y", Allow), ok(guardPathA, "y", Allow), ok(guardPathA, "y", Warn),
		}},
		{"a failure resets the repeat count", GuardrailLimits{}, []guardStep{
			ok(guardPathA, "x", Allow), ok(guardPathA, "x", Allow), ok(guardPathA, "x", Allow), fail(guardPathA, Warn), ok(guardPathA, "x", Allow), ok(guardPathA, "x", Allow), ok(guardPathA, "x", Allow), ok(guardPathA, "x", Warn),
		}},
		{"empty digests repeat too", GuardrailLimits{}, []guardStep{
			ok(guardPathA, "", Allow), ok(guardPathA, "", Allow), ok(guardPathA, "", Allow), ok(guardPathA, "", Warn),
		}},
		{"different arguments are counted apart", GuardrailLimits{}, []guardStep{
			fail(guardPathA, Allow), fail(guardPathB, Allow), fail(guardPathA, Allow), fail(guardPathB, Allow), fail(guardPathA, Warn), fail(guardPathB, Warn),
		}},
		{"reordered keys and whitespace are the same call", GuardrailLimits{}, []guardStep{
			fail(`{"a":1,"b":2}`, Allow), fail(`{"b":2, "a":1}`, Allow), fail("{\n \"a\": 1,\n \"b\": 2\n}", Warn),
		}},
		{"other calls in between do not reset a key", GuardrailLimits{}, []guardStep{
			fail(guardPathA, Allow), ok(guardPathB, "x", Allow), fail(guardPathA, Allow), ok(guardPathB, "y", Allow), fail(guardPathA, Warn),
		}},
		{"custom limits", GuardrailLimits{WarnAfterFailures: 1, HaltAfterFailures: 2, WarnAfterRepeats: 1, HaltAfterRepeats: 2}, []guardStep{
			fail(guardPathA, Allow), fail(guardPathA, Warn), ok(guardPathB, "x", Allow), ok(guardPathB, "x", Warn), ok(guardPathB, "x", Halt),
		}},
		{"failure checks disabled", GuardrailLimits{WarnAfterFailures: -1, HaltAfterFailures: -1}, []guardStep{
			fail(guardPathA, Allow), fail(guardPathA, Allow), fail(guardPathA, Allow), fail(guardPathA, Allow), fail(guardPathA, Allow), fail(guardPathA, Allow),
			ok(guardPathA, "x", Allow), ok(guardPathA, "x", Allow), ok(guardPathA, "x", Allow), ok(guardPathA, "x", Warn),
		}},
		{"repeat checks disabled", GuardrailLimits{WarnAfterRepeats: -1, HaltAfterRepeats: -1}, []guardStep{
			ok(guardPathA, "x", Allow), ok(guardPathA, "x", Allow), ok(guardPathA, "x", Allow), ok(guardPathA, "x", Allow), ok(guardPathA, "x", Allow), ok(guardPathA, "x", Allow),
			fail(guardPathA, Allow), fail(guardPathA, Allow), fail(guardPathA, Warn),
		}},
		{"warn disabled, halt kept", GuardrailLimits{WarnAfterFailures: -1}, []guardStep{
			fail(guardPathA, Allow), fail(guardPathA, Allow), fail(guardPathA, Allow), fail(guardPathA, Allow), fail(guardPathA, Halt),
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			runGuardSteps(t, tt.limits, tt.steps)
		})
	}
}

func TestGuardrailReasons(t *testing.T) {
	t.Parallel()
	call := ToolCall{Name: "read_file", Arguments: guardPathA}
	observe := func(n int, failed bool) GuardrailState {
		var st GuardrailState
		for i := 0; i < n; i++ {
			st = Observe(st, call, failed, "same")
		}
		return st
	}
	tests := []struct {
		name    string
		st      GuardrailState
		want    Verdict
		reasons []string
	}{
		{"failure warn", observe(2, true), Warn, []string{
			"This exact call (read_file with the same arguments) has failed 2 times in a row. Change the arguments or try a different approach.",
		}},
		{"failure halt", observe(4, true), Halt, []string{"Stopping this turn", "read_file", "failed 4 times in a row"}},
		{"repeat warn", observe(3, false), Warn, []string{
			"This exact call (read_file with the same arguments) returned the same result 3 times: you are not making progress",
		}},
		{"repeat halt", observe(5, false), Halt, []string{"Stopping this turn", "read_file", "same result 5 times", "not making progress"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := CheckCall(GuardrailLimits{}, tt.st, call)
			if d.Verdict != tt.want {
				t.Fatalf("verdict %v, want %v", d.Verdict, tt.want)
			}
			for _, r := range tt.reasons {
				if !strings.Contains(d.Reason, r) {
					t.Fatalf("reason %q lacks %q", d.Reason, r)
				}
			}
		})
	}
	if d := CheckCall(GuardrailLimits{WarnAfterFailures: 1}, observe(1, true), call); !strings.Contains(d.Reason, "failed 1 time in a row") {
		t.Fatalf("singular reason: %q", d.Reason)
	}
	unnamed := ToolCall{Arguments: guardPathA}
	st := Observe(Observe(GuardrailState{}, unnamed, true, ""), unnamed, true, "")
	if d := CheckCall(GuardrailLimits{}, st, unnamed); d.Verdict != Warn || !strings.Contains(d.Reason, "an unnamed tool") {
		t.Fatalf("unnamed tool: %+v", d)
	}
}

func TestCallKey(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		a, b ToolCall
		same bool
	}{
		{"key order", ToolCall{Name: "t", Arguments: `{"a":1,"b":2}`}, ToolCall{Name: "t", Arguments: `{"b":2, "a":1}`}, true},
		{"nested key order", ToolCall{Name: "t", Arguments: `{"o":{"y":[1,{"q":1,"p":2}],"x":null}}`}, ToolCall{Name: "t", Arguments: ` { "o" : { "x":null , "y":[ 1 , {"p":2,"q":1} ] } } `}, true},
		{"ids do not matter", ToolCall{ID: "1", Name: "t", Arguments: `{}`}, ToolCall{ID: "2", Name: "t", Arguments: `{}`}, true},
		{"empty is {}", ToolCall{Name: "t", Arguments: ""}, ToolCall{Name: "t", Arguments: " {} "}, true},
		{"escapes are decoded", ToolCall{Name: "t", Arguments: `{"p":"\u00e9<"}`}, ToolCall{Name: "t", Arguments: `{"p":"é<"}`}, true},
		{"different values", ToolCall{Name: "t", Arguments: `{"a":1}`}, ToolCall{Name: "t", Arguments: `{"a":2}`}, false},
		{"number spelling kept", ToolCall{Name: "t", Arguments: `{"a":1}`}, ToolCall{Name: "t", Arguments: `{"a":1.0}`}, false},
		{"array order matters", ToolCall{Name: "t", Arguments: `[1,2]`}, ToolCall{Name: "t", Arguments: `[2,1]`}, false},
		{"different names", ToolCall{Name: "read_file", Arguments: `{}`}, ToolCall{Name: "write_file", Arguments: `{}`}, false},
		{"name and args do not run together", ToolCall{Name: "a", Arguments: `b{}`}, ToolCall{Name: "ab", Arguments: `{}`}, false},
		{"unparseable verbatim", ToolCall{Name: "t", Arguments: `{"a":`}, ToolCall{Name: "t", Arguments: `{"a": `}, false},
		{"trailing data is not JSON", ToolCall{Name: "t", Arguments: `{"a":1} {}`}, ToolCall{Name: "t", Arguments: `{"a":1}`}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ka, kb := CallKey(tt.a), CallKey(tt.b)
			if (ka == kb) != tt.same {
				t.Fatalf("CallKey %q vs %q: same=%v, want %v", ka, kb, ka == kb, tt.same)
			}
		})
	}
	exact := []struct {
		call ToolCall
		want string
	}{
		{ToolCall{Name: "read_file", Arguments: "{ \"path\": \"a<b\", \"limit\": 10 }"}, `"read_file"{"limit":10,"path":"a<b"}`},
		{ToolCall{Name: "t", Arguments: "not json"}, `"t"not json`},
		{ToolCall{Name: "t"}, `"t"{}`},
	}
	for _, e := range exact {
		if got := CallKey(e.call); got != e.want {
			t.Errorf("CallKey(%+v) = %q, want %q", e.call, got, e.want)
		}
	}
}

func TestCombine(t *testing.T) {
	t.Parallel()
	allow := &Decision{Verdict: Allow, Reason: "allow1"}
	allow2 := &Decision{Verdict: Allow, Reason: "allow2"}
	warn := &Decision{Verdict: Warn, Reason: "warn1"}
	warn2 := &Decision{Verdict: Warn, Reason: "warn2"}
	halt := &Decision{Verdict: Halt, Reason: "halt1"}
	halt2 := &Decision{Verdict: Halt, Reason: "halt2"}
	odd := &Decision{Verdict: Verdict(9), Reason: "odd"}
	tests := []struct {
		name string
		in   []*Decision
		want Decision
	}{
		{"none", nil, Decision{Verdict: Allow}},
		{"all nil", []*Decision{nil, nil}, Decision{Verdict: Allow}},
		{"single allow", []*Decision{allow}, *allow},
		{"first of equal allows", []*Decision{nil, allow, allow2}, *allow},
		{"warn beats allow", []*Decision{allow, warn}, *warn},
		{"first of equal warns", []*Decision{warn2, allow, warn}, *warn2},
		{"halt beats warn", []*Decision{warn, halt, allow}, *halt},
		{"first of equal halts", []*Decision{halt2, nil, halt, warn}, *halt2},
		{"out-of-range verdict halts", []*Decision{warn, odd, halt}, Decision{Verdict: Halt, Reason: "odd"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := Combine(tt.in...); got != tt.want {
				t.Fatalf("Combine = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestHookBeatsControllerAllow(t *testing.T) {
	t.Parallel()
	deny := HookFunc(func(c ToolCall) *Decision {
		if c.Name == "terminal" {
			return &Decision{Verdict: Halt, Reason: "terminal is not allowed here"}
		}
		return nil
	})
	warnAll := HookFunc(func(ToolCall) *Decision { return &Decision{Verdict: Warn, Reason: "careful"} })
	var nilHook HookFunc
	tests := []struct {
		name string
		hook Hook
		call ToolCall
		want Decision
	}{
		{"hook halts", deny, ToolCall{Name: "terminal", Arguments: `{"command":"ls"}`}, Decision{Verdict: Halt, Reason: "terminal is not allowed here"}},
		{"hook allows", deny, ToolCall{Name: "read_file", Arguments: guardPathA}, Decision{Verdict: Allow}},
		{"hook warns", warnAll, ToolCall{Name: "read_file", Arguments: guardPathA}, Decision{Verdict: Warn, Reason: "careful"}},
		{"nil HookFunc allows", nilHook, ToolCall{Name: "terminal"}, Decision{Verdict: Allow}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			controller := CheckCall(GuardrailLimits{}, GuardrailState{}, tt.call)
			if controller.Verdict != Allow {
				t.Fatalf("controller on a fresh state: %+v", controller)
			}
			if got := Combine(&controller, tt.hook.BeforeTool(tt.call)); got != tt.want {
				t.Fatalf("Combine = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestVerdictString(t *testing.T) {
	t.Parallel()
	for v, want := range []string{"allow", "warn", "halt"} {
		if got := Verdict(v).String(); got != want {
			t.Errorf("Verdict(%d) = %q, want %q", v, got, want)
		}
	}
	if got := Verdict(-1).String(); got != "verdict(-1)" {
		t.Errorf("Verdict(-1) = %q", got)
	}
}

func TestDefaultGuardrailLimits(t *testing.T) {
	t.Parallel()
	want := GuardrailLimits{WarnAfterFailures: 2, HaltAfterFailures: 4, WarnAfterRepeats: 3, HaltAfterRepeats: 5}
	if got := DefaultGuardrailLimits(); got != want {
		t.Fatalf("DefaultGuardrailLimits = %+v", got)
	}
	if got := (GuardrailLimits{HaltAfterRepeats: -1, WarnAfterFailures: 7}).resolved(); got != (GuardrailLimits{7, 4, 3, -1}) {
		t.Fatalf("resolved = %+v", got)
	}
}

func TestObserveDoesNotChangeItsInput(t *testing.T) {
	t.Parallel()
	a := ToolCall{Name: "read_file", Arguments: guardPathA}
	b := ToolCall{Name: "read_file", Arguments: guardPathB}
	base := Observe(Observe(Observe(GuardrailState{}, a, true, ""), b, false, "x"), a, true, "")
	// Room to append in place would let a careless Observe write into base's array.
	base.Calls = append(make([]GuardrailRecord, 0, 16), base.Calls...)
	snapshot := cloneGuardState(base)
	tests := []struct {
		name   string
		call   ToolCall
		failed bool
	}{
		{"known key fails", a, true},
		{"known key succeeds", b, false},
		{"new key", ToolCall{Name: "terminal"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			next := Observe(base, tt.call, tt.failed, "y")
			if !reflect.DeepEqual(base, snapshot) {
				t.Fatalf("Observe changed its input:\n got %+v\nwant %+v", base, snapshot)
			}
			if reflect.DeepEqual(next, base) {
				t.Fatal("Observe returned the input unchanged")
			}
			next.Calls[0].Failures = 99
			if !reflect.DeepEqual(base, snapshot) {
				t.Fatal("the returned state shares memory with the input")
			}
		})
	}
	// CheckCall is pure as well.
	CheckCall(GuardrailLimits{}, base, a)
	if !reflect.DeepEqual(base, snapshot) {
		t.Fatal("CheckCall changed its input")
	}
}

func cloneGuardState(st GuardrailState) GuardrailState {
	out := st
	out.Calls = append([]GuardrailRecord(nil), st.Calls...)
	return out
}

func TestGuardrailStateJSONRoundTrip(t *testing.T) {
	t.Parallel()
	var st GuardrailState
	st = Observe(st, ToolCall{Name: "read_file", Arguments: guardPathA}, true, "")
	st = Observe(st, ToolCall{Name: "read_file", Arguments: guardPathB}, false, "abc")
	st = Observe(st, ToolCall{Name: "read_file", Arguments: guardPathB}, false, "abc")
	st = Observe(st, ToolCall{Name: "terminal", Arguments: `{"command":"ls"}`}, false, strings.Repeat("z", 500))
	for _, in := range []GuardrailState{{}, st} {
		data, err := json.Marshal(in)
		if err != nil {
			t.Fatal(err)
		}
		var out GuardrailState
		if err := json.Unmarshal(data, &out); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(in, out) {
			t.Fatalf("round trip changed the state:\n in %+v\nout %+v", in, out)
		}
		call := ToolCall{Name: "read_file", Arguments: guardPathB}
		if a, b := CheckCall(GuardrailLimits{WarnAfterRepeats: 2}, in, call), CheckCall(GuardrailLimits{WarnAfterRepeats: 2}, out, call); a != b {
			t.Fatalf("decisions differ after round trip: %+v vs %+v", a, b)
		}
	}
	if CheckCall(GuardrailLimits{WarnAfterRepeats: 2}, st, ToolCall{Name: "read_file", Arguments: guardPathB}).Verdict != Warn {
		t.Fatal("expected a warning from the populated state")
	}
}

func TestGuardrailStateIsBounded(t *testing.T) {
	t.Parallel()
	call := func(i int) ToolCall {
		return ToolCall{Name: "read_file", Arguments: `{"path":"f` + strconv.Itoa(i) + `"}`}
	}
	var st GuardrailState
	// Key 0 fails twice, then keys 1..guardrailMaxKeys-1 fill the state.
	st = Observe(st, call(0), true, "")
	st = Observe(st, call(0), true, "")
	for i := 1; i < guardrailMaxKeys; i++ {
		st = Observe(st, call(i), true, "")
	}
	if len(st.Calls) != guardrailMaxKeys {
		t.Fatalf("%d records, want %d", len(st.Calls), guardrailMaxKeys)
	}
	// Key 0 is the oldest; touching it makes key 1 the least recently used.
	st = Observe(st, call(0), true, "")
	st = Observe(st, call(guardrailMaxKeys), true, "")
	if len(st.Calls) != guardrailMaxKeys {
		t.Fatalf("%d records after overflow, want %d", len(st.Calls), guardrailMaxKeys)
	}
	if _, ok := st.find(guardRecordKey(call(1))); ok {
		t.Fatal("the least recently used key was not evicted")
	}
	if d := CheckCall(GuardrailLimits{}, st, call(0)); d.Verdict != Warn {
		t.Fatalf("recently used key lost its history: %+v", d)
	}
	// Same inputs, same state: eviction is deterministic.
	again := GuardrailState{}
	again = Observe(again, call(0), true, "")
	again = Observe(again, call(0), true, "")
	for i := 1; i < guardrailMaxKeys; i++ {
		again = Observe(again, call(i), true, "")
	}
	again = Observe(again, call(0), true, "")
	again = Observe(again, call(guardrailMaxKeys), true, "")
	if !reflect.DeepEqual(st, again) {
		t.Fatal("eviction is not deterministic")
	}
	// An oversized state (decoded from elsewhere) is trimmed back to the cap.
	big := GuardrailState{Seq: 10}
	for i := 0; i < guardrailMaxKeys+5; i++ {
		big.Calls = append(big.Calls, GuardrailRecord{Key: strconv.Itoa(i), LastSeq: int64(guardrailMaxKeys + 5 - i)})
	}
	trimmed := Observe(big, call(0), false, "x")
	if len(trimmed.Calls) != guardrailMaxKeys {
		t.Fatalf("oversized state: %d records, want %d", len(trimmed.Calls), guardrailMaxKeys)
	}
	if len(big.Calls) != guardrailMaxKeys+5 {
		t.Fatal("trimming changed the input")
	}
	// Long result digests are stored hashed.
	long := Observe(GuardrailState{}, call(0), false, strings.Repeat("r", 10000))
	if n := len(long.Calls[0].Result); n > guardrailMaxDigest {
		t.Fatalf("stored digest is %d bytes", n)
	}
}

func TestGuardrailOddInputs(t *testing.T) {
	t.Parallel()
	inputs := []ToolCall{
		{},
		{Name: "t", Arguments: strings.Repeat("[", 20000) + strings.Repeat("]", 20000)},
		{Name: "t", Arguments: "\xff\xfe{"},
		{Name: "t", Arguments: `{"s":"\xff"}`},
		{Name: "t", Arguments: `null`},
		{Name: "t", Arguments: `1e999999`},
		{Name: strings.Repeat("n", 5000), Arguments: strings.Repeat("a", 100000)},
	}
	limits := []GuardrailLimits{{}, {WarnAfterFailures: -5, HaltAfterFailures: 1, WarnAfterRepeats: 1, HaltAfterRepeats: -1}}
	for i, c := range inputs {
		for _, l := range limits {
			var st GuardrailState
			for k := 0; k < 6; k++ {
				_ = CheckCall(l, st, c)
				st = Observe(st, c, k%2 == 0, "")
			}
			if first, again := CallKey(c), CallKey(c); first != again {
				t.Fatalf("input %d: CallKey is not stable", i)
			}
			for _, r := range st.Calls {
				if len(r.Key) != 32 {
					t.Fatalf("input %d: record key %q is not a short hash", i, r.Key)
				}
			}
		}
	}
}

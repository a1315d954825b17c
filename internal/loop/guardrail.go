package loop

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// ToolCall is one requested call (name already repaired, arguments normalised).
type ToolCall struct {
	ID        string
	Name      string
	Arguments string
}

// Verdict is what a guardrail says about a call before it runs.
type Verdict int

const (
	// Allow lets the call run unremarked.
	Allow Verdict = iota
	// Warn lets the call run and appends the decision's Reason to its result.
	Warn
	// Halt blocks the call and stops the turn; the Reason is the blocked call's
	// error result and the assistant's explanation.
	Halt
)

// String returns "allow", "warn" or "halt" ("verdict(N)" for any other value).
func (v Verdict) String() string {
	switch v {
	case Allow:
		return "allow"
	case Warn:
		return "warn"
	case Halt:
		return "halt"
	}
	return "verdict(" + strconv.Itoa(int(v)) + ")"
}

// rank orders verdicts by strength. A verdict outside the known range counts
// as Halt: a guardrail answer that cannot be understood stops the call.
func (v Verdict) rank() Verdict {
	if v < Allow || v > Halt {
		return Halt
	}
	return v
}

// Decision is a guardrail's answer for one call. Reason is shown to the model:
// on Warn it is appended to the tool result; on Halt it is the blocked call's
// error result and the assistant's explanation.
type Decision struct {
	Verdict Verdict
	Reason  string
}

// Hook is a pluggable pre-execution check. Returning nil means allow.
type Hook interface {
	BeforeTool(call ToolCall) *Decision
}

// HookFunc adapts a function to Hook. A nil HookFunc allows every call.
type HookFunc func(ToolCall) *Decision

// BeforeTool calls f.
func (f HookFunc) BeforeTool(call ToolCall) *Decision {
	if f == nil {
		return nil
	}
	return f(call)
}

// Combine returns the strongest decision (Halt > Warn > Allow); among equal
// verdicts the first one wins. nil entries are skipped; with none left the
// answer is Allow. An out-of-range verdict is treated as Halt.
func Combine(ds ...*Decision) Decision {
	best := Decision{Verdict: Allow}
	found := false
	for _, d := range ds {
		if d == nil {
			continue
		}
		v := d.Verdict.rank()
		if !found || v > best.Verdict {
			best = Decision{Verdict: v, Reason: d.Reason}
			found = true
		}
	}
	return best
}

// GuardrailLimits configures the loop controller. A zero field means "use the
// default"; a negative field disables that check.
type GuardrailLimits struct {
	// WarnAfterFailures: an identical call (same name, same canonical
	// arguments) that failed this many times in a row is warned (default 2).
	WarnAfterFailures int `json:"warn_after_failures,omitempty" yaml:"warn_after_failures,omitempty"`
	// HaltAfterFailures: ... and halted (default 4).
	HaltAfterFailures int `json:"halt_after_failures,omitempty" yaml:"halt_after_failures,omitempty"`
	// WarnAfterRepeats: an identical call that returned the identical result
	// this many times is warned that it makes no progress (default 3).
	WarnAfterRepeats int `json:"warn_after_repeats,omitempty" yaml:"warn_after_repeats,omitempty"`
	// HaltAfterRepeats: ... and halted (default 5).
	HaltAfterRepeats int `json:"halt_after_repeats,omitempty" yaml:"halt_after_repeats,omitempty"`
}

// DefaultGuardrailLimits returns the limits used for zero fields.
func DefaultGuardrailLimits() GuardrailLimits {
	return GuardrailLimits{WarnAfterFailures: 2, HaltAfterFailures: 4, WarnAfterRepeats: 3, HaltAfterRepeats: 5}
}

// resolved fills zero fields with the defaults.
func (l GuardrailLimits) resolved() GuardrailLimits {
	d := DefaultGuardrailLimits()
	return GuardrailLimits{
		WarnAfterFailures: cmp.Or(l.WarnAfterFailures, d.WarnAfterFailures),
		HaltAfterFailures: cmp.Or(l.HaltAfterFailures, d.HaltAfterFailures),
		WarnAfterRepeats:  cmp.Or(l.WarnAfterRepeats, d.WarnAfterRepeats),
		HaltAfterRepeats:  cmp.Or(l.HaltAfterRepeats, d.HaltAfterRepeats),
	}
}

// guardReached reports whether count hits an enabled (positive) limit.
func guardReached(count, limit int) bool { return limit > 0 && count >= limit }

// guardrailMaxKeys bounds GuardrailState: beyond it the least recently
// observed call is forgotten.
const guardrailMaxKeys = 512

// guardrailMaxDigest is the longest result digest stored as given; longer
// ones are hashed so the state stays small.
const guardrailMaxDigest = 64

// GuardrailState is the controller's memory for one turn. It is a plain value
// carried in workflow state (and across continue-as-new), so it round-trips
// through encoding/json unchanged. Calls is ordered from least to most
// recently observed; Observe never modifies a state it is given.
type GuardrailState struct {
	// Seq numbers observations; it stands in for time in LRU eviction.
	Seq   int64             `json:"seq,omitempty"`
	Calls []GuardrailRecord `json:"calls,omitempty"`
}

// GuardrailRecord is what the controller remembers about one distinct call.
type GuardrailRecord struct {
	// Key is a hash of CallKey (the full key may carry large arguments).
	Key string `json:"key"`
	// Failures counts consecutive failed results.
	Failures int `json:"failures,omitempty"`
	// Result is the digest of the last successful result.
	Result string `json:"result,omitempty"`
	// Repeats counts consecutive successes that returned Result.
	Repeats int `json:"repeats,omitempty"`
	// LastSeq is the Seq of the latest observation of this call.
	LastSeq int64 `json:"last_seq,omitempty"`
}

// CallKey identifies a call for the controller: the quoted name followed by
// the canonical JSON of the arguments (object keys sorted, insignificant
// whitespace removed). Empty arguments count as {}; arguments that are not
// one JSON value are used verbatim.
func CallKey(call ToolCall) string {
	return strconv.Quote(call.Name) + canonicalCallArgs(call.Arguments)
}

func canonicalCallArgs(args string) string {
	trimmed := strings.TrimSpace(args)
	if trimmed == "" {
		return "{}"
	}
	dec := json.NewDecoder(strings.NewReader(trimmed))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return args
	}
	if _, err := dec.Token(); err != io.EOF {
		return args
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return args
	}
	return strings.TrimSuffix(buf.String(), "\n")
}

func guardHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:16])
}

func guardRecordKey(call ToolCall) string { return guardHash(CallKey(call)) }

func guardDigest(d string) string {
	if len(d) <= guardrailMaxDigest {
		return d
	}
	return "sha256:" + guardHash(d)
}

func (st GuardrailState) find(key string) (GuardrailRecord, bool) {
	for _, r := range st.Calls {
		if r.Key == key {
			return r, true
		}
	}
	return GuardrailRecord{}, false
}

// CheckCall decides on a call before it runs, from what was observed so far in
// this turn. Pure: st is only read.
func CheckCall(limits GuardrailLimits, st GuardrailState, call ToolCall) Decision {
	rec, ok := st.find(guardRecordKey(call))
	if !ok {
		return Decision{Verdict: Allow}
	}
	l := limits.resolved()
	subject := "this exact call (" + guardToolName(call.Name) + " with the same arguments)"
	var failure, repeat *Decision
	switch {
	case guardReached(rec.Failures, l.HaltAfterFailures):
		failure = &Decision{Verdict: Halt, Reason: fmt.Sprintf(
			"Stopping this turn: %s has failed %s in a row, and repeating it unchanged will not help.",
			subject, guardTimes(rec.Failures))}
	case guardReached(rec.Failures, l.WarnAfterFailures):
		failure = &Decision{Verdict: Warn, Reason: fmt.Sprintf(
			"%s has failed %s in a row. Change the arguments or try a different approach.",
			guardCapitalize(subject), guardTimes(rec.Failures))}
	}
	switch {
	case guardReached(rec.Repeats, l.HaltAfterRepeats):
		repeat = &Decision{Verdict: Halt, Reason: fmt.Sprintf(
			"Stopping this turn: %s returned the same result %s, so the work is not making progress.",
			subject, guardTimes(rec.Repeats))}
	case guardReached(rec.Repeats, l.WarnAfterRepeats):
		repeat = &Decision{Verdict: Warn, Reason: fmt.Sprintf(
			"%s returned the same result %s: you are not making progress. Use the result you already have, or change the arguments or approach.",
			guardCapitalize(subject), guardTimes(rec.Repeats))}
	}
	return Combine(failure, repeat)
}

// Observe records a finished call and returns the new state. failed says
// whether the tool reported an error; resultDigest is a short hash of the
// result text. A failure resets the call's repeat count; a success resets its
// failure count. st is not modified (its slice is copied, never written).
func Observe(st GuardrailState, call ToolCall, failed bool, resultDigest string) GuardrailState {
	key := guardRecordKey(call)
	seq := st.Seq + 1
	rec, ok := st.find(key)
	if !ok {
		rec = GuardrailRecord{Key: key}
	}
	if failed {
		rec.Failures++
		rec.Repeats = 0
		rec.Result = ""
	} else {
		digest := guardDigest(resultDigest)
		rec.Failures = 0
		if rec.Repeats > 0 && rec.Result == digest {
			rec.Repeats++
		} else {
			rec.Repeats = 1
			rec.Result = digest
		}
	}
	rec.LastSeq = seq

	calls := make([]GuardrailRecord, 0, len(st.Calls)+1)
	for _, r := range st.Calls {
		if r.Key != key {
			calls = append(calls, r)
		}
	}
	for len(calls) >= guardrailMaxKeys {
		calls = guardRemoveAt(calls, guardLeastRecent(calls))
	}
	calls = append(calls, rec)
	return GuardrailState{Seq: seq, Calls: calls}
}

// guardLeastRecent is the index of the record with the smallest LastSeq (the first
// one on ties). calls must not be empty.
func guardLeastRecent(calls []GuardrailRecord) int {
	best := 0
	for i, r := range calls {
		if r.LastSeq < calls[best].LastSeq {
			best = i
		}
	}
	return best
}

// guardRemoveAt drops calls[i] in place; calls must be a private copy.
func guardRemoveAt(calls []GuardrailRecord, i int) []GuardrailRecord {
	return append(calls[:i], calls[i+1:]...)
}

func guardToolName(name string) string {
	if strings.TrimSpace(name) == "" {
		return "an unnamed tool"
	}
	return name
}

func guardCapitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func guardTimes(n int) string {
	if n == 1 {
		return "1 time"
	}
	return strconv.Itoa(n) + " times"
}

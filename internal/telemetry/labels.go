package telemetry

import (
	"net/netip"
	"net/url"
	"slices"
	"strings"

	"github.com/talaria-agent/talaria/internal/turnapi"
)

// Other is the label value of anything outside a label's closed set.
const Other = "other"

// Provider classes of model endpoints that are not a known service.
const (
	// ProviderLocal: this machine (loopback, localhost).
	ProviderLocal = "local"
	// ProviderPrivate: a private network address or a host name without a
	// domain (a service in the same cluster).
	ProviderPrivate = "private"
)

// knownProviders maps the host (or the domain it ends in) of well-known
// OpenAI-compatible services to their class.
var knownProviders = []struct{ domain, class string }{
	{"api.openai.com", "openai"},
	{"openai.azure.com", "azure"},
	{"openrouter.ai", "openrouter"},
	{"api.anthropic.com", "anthropic"},
	{"generativelanguage.googleapis.com", "google"},
	{"api.groq.com", "groq"},
	{"api.mistral.ai", "mistral"},
	{"api.deepseek.com", "deepseek"},
	{"api.together.xyz", "together"},
	{"api.fireworks.ai", "fireworks"},
	{"api.x.ai", "xai"},
	{"api.perplexity.ai", "perplexity"},
	{"api.cerebras.ai", "cerebras"},
	{"nousresearch.com", "nous"},
}

// ProviderClass is the class of the model endpoint baseURL: a known
// service's name, local, private or other. It never returns the URL or
// its host, so no endpoint detail (or credential in it) becomes a label.
// An empty baseURL is OpenAI's API, as the model configuration says. Pure.
func ProviderClass(baseURL string) string {
	if strings.TrimSpace(baseURL) == "" {
		return "openai"
	}
	u, err := url.Parse(strings.TrimSpace(baseURL))
	if err != nil || u.Host == "" {
		return Other
	}
	host := strings.ToLower(strings.TrimSuffix(u.Hostname(), "."))
	if host == "" {
		return Other
	}
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return ProviderLocal
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		switch {
		case ip.IsLoopback():
			return ProviderLocal
		case ip.IsPrivate(), ip.IsLinkLocalUnicast():
			return ProviderPrivate
		}
		return Other
	}
	for _, p := range knownProviders {
		if host == p.domain || strings.HasSuffix(host, "."+p.domain) {
			return p.class
		}
	}
	if !strings.Contains(host, ".") || strings.HasSuffix(host, ".internal") || strings.HasSuffix(host, ".local") ||
		strings.HasSuffix(host, ".svc") || strings.HasSuffix(host, ".cluster.local") {
		return ProviderPrivate
	}
	return Other
}

// ModelOutcomeOK is the outcome of a model call that answered.
const ModelOutcomeOK = "ok"

// modelOutcomes are the outcomes a model call may have: ok or one of the
// error classes.
var modelOutcomes = []string{
	ModelOutcomeOK,
	string(turnapi.ClassRateLimit), string(turnapi.ClassOverloaded), string(turnapi.ClassServer),
	string(turnapi.ClassTimeout), string(turnapi.ClassNetwork), string(turnapi.ClassAuth),
	string(turnapi.ClassBilling), string(turnapi.ClassContextOverflow), string(turnapi.ClassModelNotFound),
	string(turnapi.ClassBadRequest), string(turnapi.ClassCancelled), string(turnapi.ClassTruncatedReply),
	string(turnapi.ClassInvalidResponse),
}

// ModelOutcomeLabel bounds a model call's outcome to ok and the error
// classes. Pure.
func ModelOutcomeLabel(outcome string) string { return oneOf(outcome, modelOutcomes) }

// stopReasons are the ways a turn ends (workflows.StopReason).
var stopReasons = []string{
	"text_response", "max_iterations", "interrupted", "budget_exhausted", "invalid_tool", "truncated",
	"thinking_exhausted", "empty_response_exhausted", "guardrail_halt", "error",
}

// StopReasonLabel bounds a turn's stop reason. Pure.
func StopReasonLabel(reason string) string { return oneOf(reason, stopReasons) }

// TokenKindLabel bounds a token kind. Pure.
func TokenKindLabel(kind string) string {
	return oneOf(kind, []string{TokensPrompt, TokensCompletion, TokensReasoning, TokensCached, TokensCacheWrite})
}

// Outcomes of a tool call.
const (
	ToolOK        = "ok"
	ToolError     = "error"
	ToolCancelled = "cancelled"
	ToolTimedOut  = "timed_out"
	// ToolUnknown: an earlier attempt claimed the call without recording
	// a result; it was not run again.
	ToolUnknown = "outcome_unknown"
	// ToolRefused: a person or the approval policy refused the command.
	ToolRefused = "refused"
	// ToolBlocked: a guardrail blocked the call.
	ToolBlocked = "blocked"
	// ToolInvalid: no such tool, or arguments that are not its schema's.
	ToolInvalid = "invalid"
	// ToolAnswered: answered without running (a clarify question).
	ToolAnswered = "answered"
	// ToolSkipped: not run (an interrupt, a halt of the batch).
	ToolSkipped = "skipped"
)

var toolOutcomes = []string{ToolOK, ToolError, ToolCancelled, ToolTimedOut, ToolUnknown, ToolRefused,
	ToolBlocked, ToolInvalid, ToolAnswered, ToolSkipped}

// ToolOutcomeLabel bounds a tool call's outcome. Pure.
func ToolOutcomeLabel(outcome string) string { return oneOf(outcome, toolOutcomes) }

// ToolLabel is name when the registry (known) has it, else "other": a
// model may call tools by any name. Pure.
func ToolLabel(name string, known []string) string { return oneOf(name, known) }

// CronStatusLabel bounds a scheduled run's status. Pure.
func CronStatusLabel(status string) string {
	return oneOf(status, []string{"completed", "failed", "skipped", "missed"})
}

// oneOf is v when set holds it, else Other. Pure.
func oneOf(v string, set []string) string {
	if v != "" && slices.Contains(set, v) {
		return v
	}
	return Other
}

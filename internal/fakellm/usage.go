package fakellm

import (
	openai "github.com/sashabaranov/go-openai"
)

// estimateTokens approximates a token count from a byte count (about four
// bytes a token, at least one token for non-empty input).
func estimateTokens(n int) int {
	return (n + 3) / 4
}

// usageFor returns the usage reported for a step: Step.Usage when set (with
// TotalTokens filled in), else an estimate from the request and the output.
func usageFor(raw []byte, st Step, calls []ToolCall) openai.Usage {
	if st.Usage != nil {
		u := *st.Usage
		if u.TotalTokens == 0 {
			u.TotalTokens = u.PromptTokens + u.CompletionTokens
		}
		return u
	}
	out := len(st.Text) + len(st.Reasoning)
	for _, c := range calls {
		out += len(c.Name) + len(c.Arguments)
	}
	reasoning := estimateTokens(len(st.Reasoning))
	u := openai.Usage{
		PromptTokens:            max(1, estimateTokens(len(raw))),
		CompletionTokens:        max(1, estimateTokens(out)),
		PromptTokensDetails:     &openai.PromptTokensDetails{},
		CompletionTokensDetails: &openai.CompletionTokensDetails{ReasoningTokens: reasoning},
	}
	u.TotalTokens = u.PromptTokens + u.CompletionTokens
	return u
}

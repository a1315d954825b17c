package compress

import (
	"math"

	"github.com/talaria-agent/talaria/internal/turnapi"
	"github.com/talaria-agent/talaria/models"
)

// Defaults used by Threshold and Split when given non-positive values.
const (
	DefaultContextWindow = 128000
	DefaultMaxOutput     = 4096
	DefaultRatio         = 0.5
)

// EstimateTokens approximates the prompt size of msgs as (chars+3)/4, where
// chars counts every message's content, reasoning and tool-call names and
// arguments, plus toolSchemaChars (the JSON length of the tool schemas;
// negative values count as 0), and turnapi.ImageTokens for each picture
// of a user message, up to the turnapi.MaxShownImages a call sends.
func EstimateTokens(msgs []models.Message, toolSchemaChars int) int {
	chars, images := 0, 0
	if toolSchemaChars > 0 {
		chars = toolSchemaChars
	}
	for _, m := range msgs {
		chars += runeLen(m.Content) + runeLen(m.Reasoning)
		for _, tc := range m.ToolCalls {
			chars += runeLen(tc.Function.Name) + runeLen(tc.Function.Arguments)
		}
		images += len(m.Images)
	}
	return (chars+3)/4 + min(images, turnapi.MaxShownImages)*turnapi.ImageTokens
}

// Threshold is the token count above which compression runs: ratio of
// (contextWindow - maxOutput). contextWindow <= 0 means 128000, maxOutput
// <= 0 means 4096, and ratio <= 0 (or NaN) means 0.5; ratio above 1 is
// clamped to 1. When maxOutput leaves no room (maxOutput >= contextWindow)
// the ratio is taken of the whole context window.
func Threshold(contextWindow, maxOutput int, ratio float64) int {
	if contextWindow <= 0 {
		contextWindow = DefaultContextWindow
	}
	if maxOutput <= 0 {
		maxOutput = DefaultMaxOutput
	}
	if math.IsNaN(ratio) || ratio <= 0 {
		ratio = DefaultRatio
	}
	if ratio > 1 {
		ratio = 1
	}
	budget := contextWindow - maxOutput
	if budget <= 0 {
		budget = contextWindow
	}
	return int(ratio * float64(budget))
}

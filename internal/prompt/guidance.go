package prompt

import "strings"

// generalGuidance opens the tool guidance, whatever tools are offered.
const generalGuidance = "Act through your tools and check their results instead of guessing; when a call fails, read the error and change your approach rather than repeating it."

// toolGuidance is a short paragraph on using the offered tools: a general
// sentence, then each offered tool's own (sentences, as tools.Guidance
// gives them). "" when no tool is offered. Pure.
func toolGuidance(sentences []string) string {
	if sentences == nil {
		return ""
	}
	parts := append([]string{generalGuidance}, sentences...)
	return "## Using tools\n" + strings.Join(parts, " ")
}

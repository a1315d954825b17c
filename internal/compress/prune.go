package compress

import (
	"fmt"

	"github.com/talaria-agent/talaria/models"
)

// DefaultPruneChars is the tool-output size Prune uses when maxChars <= 0.
const DefaultPruneChars = 2000

// pruneKeep is how many leading characters of a pruned tool output remain.
const pruneKeep = 200

// Prune returns a copy of middle in which every role=tool message whose
// content is over maxChars characters (default 2000 when <= 0) is cut to its
// first 200 characters followed by
// "\n[... N characters of tool output pruned ...]", N being the number of
// characters removed. Outputs the marker would not shorten are left intact,
// as are all other messages. The input is not modified.
func Prune(middle []models.Message, maxChars int) []models.Message {
	if middle == nil {
		return nil
	}
	if maxChars <= 0 {
		maxChars = DefaultPruneChars
	}
	out := make([]models.Message, len(middle))
	copy(out, middle)
	for i := range out {
		m := &out[i]
		if m.Role != "tool" {
			continue
		}
		n := runeLen(m.Content)
		if n <= maxChars {
			continue
		}
		pruned := fmt.Sprintf("%s\n[... %d characters of tool output pruned ...]",
			prefixRunes(m.Content, pruneKeep), n-pruneKeep)
		if runeLen(pruned) < n {
			m.Content = pruned
		}
	}
	return out
}

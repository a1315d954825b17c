package approval

import (
	"crypto/sha256"
	"encoding/hex"
	"unicode/utf8"

	"github.com/talaria-agent/talaria/internal/turnapi"
)

// MaxPattern bounds Assessment.Pattern in bytes, so an assessment stays
// small in a turn's history and a grant key fits its column whatever the
// length of the command; MaxGrantKey bounds GrantKey.
const (
	MaxPattern  = 256
	MaxGrantKey = len(turnapi.GrantPrefix) + MaxPattern
)

// digestMark separates the readable start of a long pattern from the
// digest of the whole.
const digestMark = " …sha256:"

// boundPattern returns p when it fits MaxPattern; otherwise its start, cut
// at a character boundary, and a digest of all of it, so two long patterns
// that differ anywhere still differ.
func boundPattern(p string) string {
	if len(p) <= MaxPattern {
		return p
	}
	sum := sha256.Sum256([]byte(p))
	tag := digestMark + hex.EncodeToString(sum[:16])
	cut := MaxPattern - len(tag)
	for cut > 0 && !utf8.RuneStart(p[cut]) {
		cut--
	}
	return p[:cut] + tag
}

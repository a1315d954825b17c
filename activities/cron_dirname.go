package activities

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"unicode"
)

// maxJobDirBytes bounds the directory name a job's local deliveries use.
const maxJobDirBytes = 96

// jobDirName is the one path element a job's local deliveries go under. A
// job's name is free text (it may hold '/', "..", control characters or be
// very long), so anything but letters, digits, '-', '_' and inner dots
// becomes '_', and a name that had to change gets a short digest of the
// original, so that two names never share a directory. Pure.
func jobDirName(name string) string {
	var b strings.Builder
	for _, r := range name {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_' || r == '.':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	safe := b.String()
	if strings.HasPrefix(safe, ".") {
		safe = "_" + safe[1:]
	}
	if safe == name && safe != "" && len(safe) <= maxJobDirBytes {
		return safe
	}
	sum := sha256.Sum256([]byte(name))
	digest := hex.EncodeToString(sum[:4])
	if len(safe) > maxJobDirBytes-len(digest)-1 {
		safe = strings.ToValidUTF8(safe[:maxJobDirBytes-len(digest)-1], "")
	}
	return safe + "-" + digest
}

package activities

import "github.com/talaria-agent/talaria/internal/turnapi"

// previewOf is the final answer as a turn's result carries it: whole when
// it fits in MaxPreviewBytes, else its beginning and clipped. Pure.
func previewOf(text string) (string, bool) {
	return turnapi.ClipJSON(text, turnapi.MaxPreviewBytes)
}

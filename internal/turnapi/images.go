package turnapi

// Bounds of the pictures a model call sends.
const (
	// MaxShownImages is how many of a conversation's most recent pictures
	// a model call sends as images; an older one is named in a line of its
	// message instead, so that a long conversation's pictures do not make
	// every call cost more.
	MaxShownImages = 8
	// ImageTokens is what one picture sent counts for in the estimate of
	// a conversation's size, in tokens (providers bill a picture as a few
	// hundred to a few thousand tokens, by its size).
	ImageTokens = 1000
)

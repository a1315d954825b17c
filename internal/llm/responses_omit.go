package llm

import (
	"errors"
	"net/http"
	"strings"
	"sync"
)

// responsesOmit are the optional parts of a Responses request an endpoint
// refused for a model.
type responsesOmit struct {
	// include: the encrypted reasoning ("include":
	// ["reasoning.encrypted_content"]), refused for models that do not
	// reason.
	include bool
	// summary: reasoning summaries, refused to organisations that are not
	// verified.
	summary bool
}

// refused holds, for the process, what each endpoint and model refused.
var refused sync.Map // refusedKey → responsesOmit

func refusedKey(e Endpoint) string { return e.BaseURL + "\x00" + e.Model }

// refusedParts is what e refused so far for its model.
func refusedParts(e Endpoint) responsesOmit {
	if v, ok := refused.Load(refusedKey(e)); ok {
		return v.(responsesOmit)
	}
	return responsesOmit{}
}

func rememberRefused(e Endpoint, o responsesOmit) { refused.Store(refusedKey(e), o) }

// omitRefused reads a failed call: when it is a 400 refusing an optional
// part still sent, that part is left out and the call is to be made
// again. The error names the part by its param (include,
// reasoning.summary) or, through a proxy that drops it, by its message.
// Pure.
func omitRefused(omit responsesOmit, reply Reply, err error) (responsesOmit, bool) {
	var e *Error
	if !errors.As(err, &e) || e.Status != http.StatusBadRequest || reply.Streamed != "" || e.Streamed != "" {
		return omit, false
	}
	text := strings.ToLower(e.Param + " " + e.Message)
	switch {
	case !omit.include && (e.Param == "include" || strings.Contains(text, "encrypted content")):
		omit.include = true
	case !omit.summary && (strings.HasPrefix(e.Param, "reasoning.summary") || strings.Contains(text, "reasoning summar")):
		omit.summary = true
	default:
		return omit, false
	}
	return omit, true
}

package engine

import (
	"context"
	"time"

	"github.com/talaria-agent/talaria/internal/embedded"
	"github.com/talaria-agent/talaria/workflows"
)

const (
	// visibilityTimeout bounds the search-attribute check at worker start.
	visibilityTimeout = 10 * time.Second
	// namespaceRefresh is how long a Temporal server may take to accept
	// search attributes just added (its namespace cache refreshes every
	// 10 s by default), with a margin.
	namespaceRefresh = 15 * time.Second
)

// prepareVisibility makes sure the namespace has the turn search
// attributes (workflows.SearchAttributes) and tells this process's
// workflows whether turns may carry them. An embedded server's namespace
// is made with them; an older one, or an external Temporal, gets them
// here, and turns carry them once the server accepts them. Where they
// cannot be added (no operator permission), turns start without them and
// one warning says so: they stay findable by workflow id.
func (rt *Runtime) prepareVisibility(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, visibilityTimeout)
	defer cancel()
	ns := rt.Config.Temporal.Namespace
	added, err := embedded.AddSearchAttributes(ctx, rt.Client, ns, workflows.SearchAttributes())
	switch {
	case err != nil:
		workflows.SetSearchAttributesReady(false)
		rt.logger.Warn("turns are not searchable by session in the Temporal UI: register the search attributes "+
			workflows.SearchAttrSessionID+" and "+workflows.SearchAttrStopReason+" (Keyword) on namespace "+ns+
			" with 'temporal operator search-attribute create', then restart", "error", err)
	case added:
		rt.logger.Info("registered the turn search attributes", "namespace", ns)
		workflows.SetSearchAttributesReady(false)
		rt.visibilityTimer = time.AfterFunc(namespaceRefresh, func() { workflows.SetSearchAttributesReady(true) })
	default:
		workflows.SetSearchAttributesReady(true)
	}
}

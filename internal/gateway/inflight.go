package gateway

import (
	"context"
	"fmt"
	"strings"

	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/talaria-agent/talaria/workflows"
)

// InFlight counts, by platform account ("telegram/123456"), the chat
// messages taken and not yet answered: their ChatMessageWorkflow runs
// (queued behind a turn, running, or sending the reply).
func InFlight(ctx context.Context, c client.Client, namespace string) (map[string]int, error) {
	counts := map[string]int{}
	req := &workflowservice.ListWorkflowExecutionsRequest{
		Namespace: namespace,
		Query:     fmt.Sprintf("WorkflowType = '%s' AND ExecutionStatus = 'Running'", workflows.ChatMessageWorkflowName),
	}
	for {
		resp, err := c.ListWorkflow(ctx, req)
		if err != nil {
			return nil, fmt.Errorf("list the chat messages in flight: %w", err)
		}
		for _, e := range resp.GetExecutions() {
			if account, ok := accountOf(e.GetExecution().GetWorkflowId()); ok {
				counts[account]++
			}
		}
		if len(resp.GetNextPageToken()) == 0 {
			return counts, nil
		}
		req.NextPageToken = resp.GetNextPageToken()
	}
}

// accountOf is the platform account of a chat message's workflow id
// ("gateway/telegram/123456/<update>" → "telegram/123456"). Pure.
func accountOf(workflowID string) (string, bool) {
	parts := strings.SplitN(workflowID, "/", 4)
	if len(parts) != 4 || parts[0] != "gateway" || parts[1] == "" || parts[2] == "" {
		return "", false
	}
	return parts[1] + "/" + parts[2], true
}

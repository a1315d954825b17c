package engine

import (
	"context"
	"fmt"

	enums "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/temporalproto"
)

// HistoryJSON is the history of one run of workflowID (runID empty: the
// latest) in the JSON form Temporal's replayer reads, for the replay
// corpus (workflows/testdata) and for looking at a turn by hand.
func (rt *Runtime) HistoryJSON(ctx context.Context, workflowID, runID string) ([]byte, int, error) {
	hist := &historypb.History{}
	iter := rt.Client.GetWorkflowHistory(ctx, workflowID, runID, false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for iter.HasNext() {
		ev, err := iter.Next()
		if err != nil {
			return nil, 0, fmt.Errorf("history of %s: %w", workflowID, err)
		}
		hist.Events = append(hist.Events, ev)
	}
	data, err := temporalproto.CustomJSONMarshalOptions{Indent: "  "}.Marshal(hist)
	if err != nil {
		return nil, 0, fmt.Errorf("history of %s: %w", workflowID, err)
	}
	return data, len(hist.Events), nil
}

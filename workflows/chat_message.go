package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

// Stable names of the gateway's workflow and activities. They run on the
// gateway's own task queue, in the process that holds the platform's
// credentials (serve, or talaria gateway).
const (
	GatewayTaskQueue        = "talaria-gateway"
	ChatMessageWorkflowName = "ChatMessageWorkflow"
	ChatHandoffName         = "ChatHandoff"
	ChatAwaitTurnName       = "ChatAwaitTurn"
	ChatReplyName           = "ChatReply"
	// ChatSubmitName hands a chat message to its session's coordinator
	// and returns once it is durable; ChatFollowName shows the turn in the
	// chat (typing, the draft reply) until it is cancelled or its
	// segment ends (changeTurnEndSignal).
	ChatSubmitName = "ChatSubmit"
	ChatFollowName = "ChatFollow"
)

// ChatMessageInput is one inbound chat message, as the gateway received it.
type ChatMessageInput struct {
	// Platform and Account name the bot ("telegram", its id).
	Platform, Account string
	// ChatID and MessageID locate the message; the reply answers it.
	ChatID, MessageID string
	// Message is what goes to the session (its RequestID is this
	// workflow's id, so a retried handoff delivers it once).
	Message Message
}

// ChatTurn is the turn a chat message became.
type ChatTurn struct {
	TurnID string
}

// ChatTurnResult is how a chat message's turn ended: small, the text stays
// in the store.
type ChatTurnResult struct {
	FinalMessageID int64
	StopReason     StopReason
	Completed      bool
	// Error is a short reason when the turn failed.
	Error string `json:",omitempty"`
}

// ChatReplyInput sends a turn's reply to its chat.
type ChatReplyInput struct {
	Platform, Account, ChatID, ReplyTo string
	TurnID                             string
	Result                             ChatTurnResult
}

// ChatMessageWorkflow carries one inbound chat message to its reply: it
// hands the message to the session's coordinator, waits for the turn it
// became, and sends the reply. Its id is the platform's update, so an
// update received twice is one message; each step is an activity, so a
// crash anywhere resumes there: the message is delivered once, and each
// part of the reply is sent once (ChatReply records what it sent).
func ChatMessageWorkflow(ctx workflow.Context, in ChatMessageInput) error {
	ctx = withEpoch(ctx)
	in.Message.RequestID = workflow.GetInfo(ctx).WorkflowExecution.ID
	if has(ctx, changeTurnEndSignal) {
		return chatBySignals(ctx, in)
	}
	long := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 30 * 24 * time.Hour,
		HeartbeatTimeout:    30 * time.Second,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: time.Minute},
	})
	var turn ChatTurn
	if err := workflow.ExecuteActivity(long, ChatHandoffName, in).Get(ctx, &turn); err != nil {
		return err
	}
	var res ChatTurnResult
	if err := workflow.ExecuteActivity(long, ChatAwaitTurnName, in, turn).Get(ctx, &res); err != nil {
		return err
	}
	return chatReply(ctx, in, turn, res)
}

// chatReply sends the reply of the message's turn (ChatReply).
func chatReply(ctx workflow.Context, in ChatMessageInput, turn ChatTurn, res ChatTurnResult) error {
	reply := ChatReplyInput{Platform: in.Platform, Account: in.Account, ChatID: in.ChatID, ReplyTo: in.MessageID,
		TurnID: turn.TurnID, Result: res}
	opts := workflow.ActivityOptions{
		StartToCloseTimeout: 10 * time.Minute,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: time.Minute, MaximumAttempts: 50},
	}
	if has(ctx, changeReplyHeartbeat) {
		opts.HeartbeatTimeout = 30 * time.Second // a gateway killed between parts resumes soon
	}
	return workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, opts), ChatReplyName, reply).Get(ctx, nil)
}

// RegisterGateway registers the gateway's workflow under its stable name.
func RegisterGateway(r worker.WorkflowRegistry) {
	r.RegisterWorkflowWithOptions(ChatMessageWorkflow, workflow.RegisterOptions{Name: ChatMessageWorkflowName})
	r.RegisterWorkflowWithOptions(ChatDeliverWorkflow, workflow.RegisterOptions{Name: ChatDeliverWorkflowName})
	r.RegisterWorkflowWithOptions(ChatCompactWorkflow, workflow.RegisterOptions{Name: ChatCompactWorkflowName})
}

// Names of the delivery of a result (a cron job's) to a chat.
const (
	ChatDeliverWorkflowName = "ChatDeliverWorkflow"
	ChatSendName            = "ChatSend"
)

// ChatDeliverInput sends a result to a chat: the stored answer MessageID
// (or, without one, Text), under Title. Key names the delivery: each part
// is sent once under it.
type ChatDeliverInput struct {
	Platform, ChatID, Key, Title string
	MessageID                    int64
	Text                         string `json:",omitempty"`
	// Files are documents sent after the text: stored bytes, by
	// reference.
	Files []ChatFile `json:",omitempty"`
}

// ChatFile is a document a delivery sends: the id of its stored bytes,
// and its name and type.
type ChatFile struct {
	ID, Name, MIME string
}

// ChatDeliverWorkflow runs the delivery to a chat where the platform's
// credentials are: the gateway's task queue. It returns the id of the
// first message sent.
func ChatDeliverWorkflow(ctx workflow.Context, in ChatDeliverInput) (string, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 2 * time.Minute,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: 30 * time.Second, MaximumAttempts: 10},
	})
	var id string
	err := workflow.ExecuteActivity(ctx, ChatSendName, in).Get(ctx, &id)
	return id, err
}

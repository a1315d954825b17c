package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/talaria-agent/talaria/activities"
	"github.com/talaria-agent/talaria/config"
	"github.com/talaria-agent/talaria/internal/mailer"
	"github.com/talaria-agent/talaria/internal/tools"
	"github.com/talaria-agent/talaria/internal/turnapi"
	"github.com/talaria-agent/talaria/models"
	"github.com/talaria-agent/talaria/workflows"
)

// loggedDeliverers are deliverers that each say in one line what they
// delivered (job, slot, target and where it went) or why an attempt failed.
func loggedDeliverers(logger *slog.Logger, ds map[string]activities.Deliverer) map[string]activities.Deliverer {
	out := make(map[string]activities.Deliverer, len(ds))
	for scheme, d := range ds {
		out[scheme] = activities.DelivererFunc(func(ctx context.Context, in turnapi.DeliverInput) (string, error) {
			where, err := d.Deliver(ctx, in)
			attrs := []any{"job", in.JobName, "job_id", in.JobID, "slot", in.Slot.UTC().Format(time.RFC3339), "target", in.Target}
			if err != nil {
				logger.InfoContext(ctx, "delivery attempt failed", append(attrs, "error", err)...)
				return where, err
			}
			logger.InfoContext(ctx, "delivered", append(attrs, "to", where)...)
			return where, nil
		})
	}
	return out
}

// chatDeliveryTimeout is how long a delivery to a chat may wait for a
// gateway to take it before it is given up (and recorded failed).
const chatDeliveryTimeout = 2 * time.Minute

// chatDeliverer delivers cron results to chats ("telegram:<chat>"): it
// hands them to the gateway, which holds the platform's credentials, as a
// ChatDeliverWorkflow whose id names the job, the slot and the target (a
// retried delivery is the same one), and waits for it.
func chatDeliverer(c client.Client, platform string) activities.Deliverer {
	return activities.DelivererFunc(func(ctx context.Context, in turnapi.DeliverInput) (string, error) {
		chat := strings.TrimPrefix(in.Target, platform+":")
		key := fmt.Sprintf("deliver/%s/%d/%s", in.JobID, in.Slot.UTC().Unix(), in.Target)
		din := workflows.ChatDeliverInput{Platform: platform, ChatID: chat, Key: key, MessageID: in.MessageID,
			Title: fmt.Sprintf("%s — %s", in.JobName, in.Slot.UTC().Format("2006-01-02 15:04 UTC"))}
		if in.MessageID == 0 {
			din.Text = turnapi.BoundText(in.Text, 16<<10)
		}
		run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
			ID: key, TaskQueue: workflows.GatewayTaskQueue,
			WorkflowIDReusePolicy:    enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE_FAILED_ONLY,
			WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
			WorkflowExecutionTimeout: chatDeliveryTimeout,
		}, workflows.ChatDeliverWorkflowName, din)
		if err != nil {
			return "", fmt.Errorf("deliver to %s: %w", in.Target, err)
		}
		var id string
		if err := run.Get(ctx, &id); err != nil {
			return "", fmt.Errorf("deliver to %s (is a gateway for %s running?): %w", in.Target, platform, err)
		}
		return fmt.Sprintf("%s message %s", in.Target, id), nil
	})
}

// emailDeliverer delivers cron results by email ("email:<address>")
// through the SMTP server smtp configures; its password comes from the
// environment variable it names, read when a delivery is sent.
func emailDeliverer(smtp config.SMTP) activities.Deliverer {
	return activities.DelivererFunc(func(ctx context.Context, in turnapi.DeliverInput) (string, error) {
		to := strings.TrimPrefix(in.Target, "email:")
		if smtp.Host == "" {
			return "", temporal.NewNonRetryableApplicationError(mailer.ErrNotConfigured.Error(), "BadTarget", nil)
		}
		subject := fmt.Sprintf("%s — %s", in.JobName, in.Slot.UTC().Format("2006-01-02 15:04 UTC"))
		password := ""
		if smtp.PasswordEnv != "" {
			password = os.Getenv(smtp.PasswordEnv)
		}
		if err := mailer.Send(ctx, smtp, password, mailer.Message{To: to, Subject: subject, Markdown: in.Text}); err != nil {
			return "", err
		}
		return in.Target, nil
	})
}

// homeDeliverer delivers to the home chat (/sethome).
func homeDeliverer(store interface {
	Home(context.Context) (string, error)
}, platforms map[string]activities.Deliverer) activities.Deliverer {
	return chatOf(platforms, "no home chat is set: send /sethome in the chat that should get these deliveries",
		func(ctx context.Context, _ turnapi.DeliverInput) (string, error) { return store.Home(ctx) })
}

// originDeliverer delivers to the chat that made the job (its Origin).
func originDeliverer(store interface {
	CronJob(context.Context, string) (*models.CronJob, error)
}, platforms map[string]activities.Deliverer) activities.Deliverer {
	return chatOf(platforms, "the job was not made in a chat: it has no origin to deliver to",
		func(ctx context.Context, in turnapi.DeliverInput) (string, error) {
			job, err := store.CronJob(ctx, in.JobID)
			if errors.Is(err, models.ErrNotFound) {
				return "", nil // gone, and with it the chat that made it
			}
			if err != nil {
				return "", err
			}
			return job.Origin, nil
		})
}

// chatOf delivers to the chat resolve names ("telegram:<chat>"), through
// that platform's deliverer; none (or one of no platform here) is the
// non-retryable failure missing.
func chatOf(platforms map[string]activities.Deliverer, missing string,
	resolve func(context.Context, turnapi.DeliverInput) (string, error)) activities.Deliverer {
	return activities.DelivererFunc(func(ctx context.Context, in turnapi.DeliverInput) (string, error) {
		target, err := resolve(ctx, in)
		if err != nil {
			return "", err
		}
		scheme, _, _ := strings.Cut(target, ":")
		d := platforms[scheme]
		if target == "" || d == nil {
			return "", temporal.NewNonRetryableApplicationError(missing, "BadTarget", nil)
		}
		in.Target = target
		return d.Deliver(ctx, in)
	})
}

// sendMessageTimeout bounds how long a send_message call waits for a
// gateway to take its message; the delivery is given up with it, so a
// message not taken in time is not sent later.
const sendMessageTimeout = 30 * time.Second

// chatSender sends send_message's messages: like a cron result, as a
// ChatDeliverWorkflow on the gateway's task queue whose id is the call's
// delivery key (a re-run call is the same delivery), untitled, its files
// stored first and sent by reference, and waits
// at most timeout for it.
func chatSender(c client.Client, st *models.Store, timeout time.Duration) tools.ChatSendFunc {
	return func(ctx context.Context, target, key, text string, files []tools.ChatFile) (string, error) {
		platform, chat, _ := strings.Cut(target, ":")
		if !tools.IsChatPlatform(platform) || chat == "" {
			return "", fmt.Errorf("%q is not a chat", target)
		}
		ctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		din := workflows.ChatDeliverInput{Platform: platform, ChatID: chat, Key: key, Text: text}
		for _, f := range files {
			id, err := st.PutAttachment(ctx, f.MIME, f.Data)
			if err != nil {
				return "", err
			}
			din.Files = append(din.Files, workflows.ChatFile{ID: id, Name: f.Name, MIME: f.MIME})
		}
		run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
			ID: key, TaskQueue: workflows.GatewayTaskQueue,
			WorkflowIDReusePolicy:    enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE_FAILED_ONLY,
			WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
			WorkflowExecutionTimeout: timeout,
		}, workflows.ChatDeliverWorkflowName, din)
		if err != nil {
			return "", err
		}
		var id string
		if err := run.Get(ctx, &id); err != nil {
			if ctx.Err() != nil {
				return "", fmt.Errorf("no gateway for %s took the message within %s (is one running?)", platform, timeout)
			}
			return "", err
		}
		return fmt.Sprintf("%s (message %s)", target, id), nil
	}
}

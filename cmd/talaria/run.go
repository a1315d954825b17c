package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/talaria-agent/talaria"

	"github.com/talaria-agent/talaria/internal/textline"

	"github.com/spf13/cobra"

	"github.com/talaria-agent/talaria/config"
)

// runFlags are the flags of `talaria run`.
type runFlags struct {
	goal, session, model      string
	tools, deliver            []string
	maxHours, maxCost         float64
	maxIterations, totalIters int
	jsonOut, background       bool
	wait                      string
}

func newRunCommand() *cobra.Command {
	var f runFlags
	c := &cobra.Command{
		Use:   "run [TASK | --goal GOAL]",
		Short: "Run a task, or pursue a goal over as many turns as it takes, in the foreground or the background",
		Long: `run TASK runs one turn with TASK in a new session; run --goal works toward GOAL
over as many turns as it takes. With --background either starts and returns at
once (it needs a running 'talaria serve', which goes on with it); when it ends,
its outcome is delivered to --deliver's targets (default: local, a file under
$TALARIA_HOME/cron/output; also home, telegram:<chat>, slack:<channel>,
discord:<channel>, webhook:<url>, email:<address>). run --wait SESSION follows a run started
before, or prints how it ended.

run --goal runs a turn with the goal; when the turn ends (its answer, or its
iteration budget spent and summarised) the model is asked, without tools,
whether the goal is done, can go on, or is blocked, and while it can go on
another turn continues the same conversation.
Each turn is printed on stderr as it ends. Compaction keeps the conversation
bounded over hours, and the goal is durable: it goes on across restarts of
serve. 'talaria stop SESSION' ends it, interrupting the running turn.

The goal ends done, blocked, interrupted, failed, or when a budget is spent:
--max-hours (wall time), --max-cost (USD, from the turns' token usage and the
model's price: config.yaml's prices, else the built-in list prices), or
--max-iterations-total (model calls of all turns). Without a budget a goal
stops after 24 hours or 1000 model calls.

Exit status: 0 when the task or goal is done, 1 when it ended otherwise, 2 for
usage or configuration errors.`,
		Example: `  talaria run --goal "make every test in ./pkg pass" --max-hours 2
  talaria run --goal "migrate the 40 handlers to the new API" --max-iterations 30 --max-cost 5
  talaria run --background "summarise the logs in ./logs" --deliver home
  talaria run --wait goal-1a2b3c`,
		Args: rangeArgs(0, 1, "one TASK (quote it)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			task := ""
			if len(args) == 1 {
				task = args[0]
			}
			return runGoal(cmd, f, task)
		},
	}
	c.Flags().StringVar(&f.goal, "goal", "", "a goal to pursue over as many turns as it takes (instead of a TASK)")
	c.Flags().StringVar(&f.session, "session", "", "the goal's session id, which must be new (default: a fresh id)")
	c.Flags().StringVarP(&f.model, "model", "m", "", "model name (env TALARIA_MODEL)")
	c.Flags().StringSliceVar(&f.tools, "tools", nil, "tools or toolsets the turns may use (default: all)")
	c.Flags().IntVar(&f.maxIterations, "max-iterations", 0, fmt.Sprintf("tool-calling iterations per turn (default %d)", config.DefaultMaxIterations))
	c.Flags().IntVar(&f.totalIters, "max-iterations-total", 0, "model calls of all turns together (default 1000 without another budget)")
	c.Flags().Float64Var(&f.maxHours, "max-hours", 0, "wall time in hours (default 24 without another budget)")
	c.Flags().Float64Var(&f.maxCost, "max-cost", 0, "spend in USD, from token usage and the model's price")
	c.Flags().BoolVar(&f.jsonOut, "json", false, "print exactly one JSON object, the goal's result, on stdout")
	c.Flags().BoolVar(&f.background, "background", false, "start and return at once; a running serve goes on with it")
	c.Flags().StringSliceVar(&f.deliver, "deliver", nil, "where the outcome goes when it ends (default with --background: local)")
	c.Flags().StringVar(&f.wait, "wait", "", "follow the run of this session, started before")
	return c
}

// Defaults of a goal with no budget.
const (
	defaultGoalHours      = 24
	defaultGoalIterations = 1000
)

func runGoal(cmd *cobra.Command, f runFlags, task string) error {
	ctx := cmd.Context()
	cfg, err := loadConfig(cmd)
	if err != nil {
		return err
	}
	if f.wait != "" {
		if f.goal != "" || task != "" || f.background {
			return usagef("--wait follows a run started before: it takes no TASK, --goal or --background")
		}
		rt, release, err := openRuntime(ctx, cfg, newLogger(cfg.LogLevel))
		if err != nil {
			return err
		}
		defer release()
		return followGoal(cmd, rt, f.wait, f.jsonOut, false)
	}
	goal, once := strings.TrimSpace(f.goal), false
	if task != "" {
		goal, once = strings.TrimSpace(task), true
	}
	switch {
	case f.goal != "" && task != "":
		return usagef("give a TASK or --goal GOAL, not both")
	case goal == "":
		return usagef("run needs a TASK or --goal GOAL")
	case f.totalIters == 1:
		return usagef("--max-iterations-total must be at least 2: a turn needs one model call and one for its summary")
	case once && (f.maxHours > 0 || f.maxCost > 0 || f.totalIters > 0):
		return usagef("--max-hours, --max-cost and --max-iterations-total bound a --goal; a TASK is one turn (--max-iterations bounds it)")
	case f.maxHours < 0 || f.maxCost < 0 || f.totalIters < 0 || f.maxIterations < 0:
		return usagef("--max-hours, --max-cost, --max-iterations and --max-iterations-total must not be negative")
	case f.session != "" && !sessionIDPattern.MatchString(f.session):
		return usagef("--session %q: use 1-128 letters, digits, '.', '_', '~' or '-'", f.session)
	}
	if err := talaria.CheckCronTools(f.tools); err != nil {
		return usagef("--tools: %v", err)
	}
	deliver := f.deliver
	if f.background && len(deliver) == 0 {
		deliver = []string{"local"}
	}
	if err := talaria.CheckCronDeliver(deliver); err != nil {
		return usagef("--deliver: %v", err)
	}
	if slices.Contains(deliver, talaria.OriginDelivery) {
		return usagef("--deliver origin: a run from the terminal has no chat of origin; name the target (home, telegram:<chat>, ...)")
	}
	if f.model != "" {
		cfg.Model.Name = f.model
	}
	if f.maxIterations > 0 {
		cfg.MaxIterations = f.maxIterations
	}
	budget := talaria.GoalBudget{MaxIterations: f.totalIters, MaxCost: f.maxCost, MaxDuration: time.Duration(f.maxHours * float64(time.Hour))}
	if budget == (talaria.GoalBudget{}) {
		budget.MaxIterations, budget.MaxDuration = defaultGoalIterations, defaultGoalHours*time.Hour
	}
	if price, ok := cfg.PriceOf(cfg.Model.Name); ok {
		budget.InputPrice, budget.OutputPrice = price.Input, price.Output
	} else if f.maxCost > 0 {
		return usagef("--max-cost: no price is known for the model %q; set models.%s.input and .output (USD per million tokens) in config.yaml (or prices.%s.input and .output)", cfg.Model.Name, cfg.Model.Name, cfg.Model.Name)
	}
	workdir, err := os.Getwd()
	if err != nil {
		return usagef("cannot read the working directory: %v", err)
	}
	rt, release, err := openRuntime(ctx, cfg, newLogger(cfg.LogLevel))
	if err != nil {
		return err
	}
	defer release()
	if f.background && rt.Worker != nil {
		return usagef("--background needs a running 'talaria serve' to go on after this command exits; start one, or run without --background")
	}
	session := f.session
	if session == "" {
		session = "goal-" + newSessionID()
	}
	turn := talaria.WithModel(talaria.TurnTemplate(cfg, workdir), f.model)
	turn.Tools = talaria.UnattendedTools(cfg, talaria.ExpandToolsets(f.tools))
	if f.background {
		turn.Approvals.Mode = talaria.ApprovalDeny // nobody waits at a terminal
	}
	err = rt.StartGoal(ctx, talaria.GoalInput{SessionID: session, Goal: goal, Turn: turn, Budget: budget, Once: once, Deliver: deliver})
	if errors.Is(err, talaria.ErrSessionInUse) {
		return usageErr(err)
	}
	if err != nil {
		return err
	}
	if f.background {
		if f.jsonOut {
			return writeJSON(cmd.OutOrStdout(), map[string]string{"session_id": session, "workflow_id": talaria.GoalWorkflowID(session)})
		}
		fmt.Fprintf(cmd.OutOrStdout(), "started %s in the background; its outcome goes to %s\nfollow it: talaria run --wait %s   stop it: talaria stop %s\n",
			session, strings.Join(deliver, ", "), session, session)
		return nil
	}
	return followGoal(cmd, rt, session, f.jsonOut, true)
}

// followGoal waits for the run of session, showing on stderr what each
// turn does as it runs (its tools, waits and delegated tasks; from the
// first turn when fromStart, else from the one running now) and a line
// for each turn as it ends, and prints how it ended.
func followGoal(cmd *cobra.Command, rt *talaria.Runtime, session string, asJSON, fromStart bool) error {
	ctx, cancel := context.WithCancel(cmd.Context())
	defer cancel()
	errOut := &syncWriter{w: cmd.ErrOrStderr()}
	fmt.Fprintf(errOut, "session: %s\n", session)
	go sayApprovals(ctx, rt, session, errOut)
	finish := followGoalTurns(ctx, rt, session, errOut, fromStart)
	res, err := rt.WaitGoal(ctx, session, func(t talaria.GoalTurn) {
		line := fmt.Sprintf("turn %d: %s, %d model calls", t.Number, t.StopReason, t.APICalls)
		if t.Verdict != "" {
			line += " — " + t.Verdict
			if t.Reason != "" {
				line += ": " + t.Reason
			}
		}
		fmt.Fprintln(errOut, line)
	})
	finish(res.GoalProgress)
	if errors.Is(err, talaria.ErrNoGoal) {
		return &exitError{code: exitFailure, err: fmt.Errorf("no run in session %q (talaria run starts one)", session)}
	}
	if err != nil {
		return err
	}
	if asJSON {
		if err := writeJSON(cmd.OutOrStdout(), res); err != nil {
			return err
		}
	} else {
		if res.FinalMessageID != 0 {
			if m, err := rt.Store.Message(ctx, res.FinalMessageID); err == nil {
				fmt.Fprintln(cmd.OutOrStdout(), talaria.FinalText(m))
			}
		}
		fmt.Fprintf(cmd.OutOrStdout(), "goal %s: %s (%d turns, %d model calls, %d tokens, $%.4f)\n",
			res.Outcome, res.Reason, res.TurnCount, res.Iterations, res.Usage.TotalTokens, res.CostUSD)
	}
	if res.Outcome != talaria.GoalDone {
		return &exitError{code: exitFailure}
	}
	return nil
}

// sayApprovals tells, once per command, that the run waits for an
// approval and how to give it, until ctx ends.
func sayApprovals(ctx context.Context, rt *talaria.Runtime, session string, w io.Writer) {
	said := ""
	talaria.Every(ctx, time.Second, func(ctx context.Context) {
		p, _, err := rt.Waiting(ctx, session)
		if err != nil || p.PendingApproval == nil || p.PendingApproval.CallID == said {
			return
		}
		said = p.PendingApproval.CallID
		fmt.Fprintf(w, "  ⚠ waiting for approval: %s\n    %s\n", textline.Visible(p.PendingApproval.Command), approveHow(session, false))
	})
}

package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/talaria-agent/talaria"

	"github.com/spf13/cobra"

	"github.com/talaria-agent/talaria/config"
)

type chatFlags struct {
	query         string
	session       string
	model         string
	maxIterations int
	jsonOut       bool
	yolo          bool
	resume        string
	continueLast  bool
	tools         []string
}

func newChatCommand() *cobra.Command {
	var f chatFlags
	c := &cobra.Command{
		Use:   "chat",
		Short: "Talk to the agent: an interactive session, or one turn with -q",
		Long: `chat sends messages to the agent. With -q it runs one turn and exits; without,
it reads one message per line from standard input (type /exit or Ctrl-D to quit).

If a 'talaria serve' is running for the same TALARIA_HOME, chat is its client;
otherwise chat starts the embedded Temporal server and a worker in-process for
the duration of the command. Tools run in the directory chat was started in.

If serve stops answering while chat waits for a turn (killed, crashed, or
stopped because its store went away), chat says so within a few seconds and
keeps waiting: the turn is durable and goes on when serve is started again, by
hand or by a supervisor.

With -q, chat prints the session id on stderr ("session: ID"). When the turn
waits on a person (a dangerous command to approve, a clarify question), chat
says what it waits on and the 'talaria approve/deny/answer' command to answer
from another terminal. On a terminal it also asks inline; when standard input
is not a terminal approvals.noninteractive decides: deny (the default: the
command is refused, a question is answered "no one is available", at once)
or wait. Ctrl-C interrupts the turn and waits for it to stop (Ctrl-C again
quits at once); the exit status is then 130.

Exit status: 0 when the (last) turn completed, 1 when it did not, 2 for usage or
configuration errors (including an unconfigured or unreachable model endpoint),
130 when -q was interrupted with Ctrl-C.`,
		Example: `  talaria chat -q "summarise README.md"
  talaria chat -q "continue" --session my-project --json
  OPENAI_BASE_URL=http://localhost:11434/v1 talaria chat -m llama3.1`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runChat(cmd, f) },
	}
	c.Flags().StringVarP(&f.query, "query", "q", "", "run one turn with this message and exit")
	c.Flags().StringVar(&f.session, "session", "", "session id to continue (created when new; default: a fresh id)")
	c.Flags().StringVarP(&f.model, "model", "m", "", "model name (env TALARIA_MODEL)")
	c.Flags().IntVar(&f.maxIterations, "max-iterations", 0, fmt.Sprintf("tool-calling iterations allowed per turn (default %d)", config.DefaultMaxIterations))
	c.Flags().BoolVar(&f.jsonOut, "json", false, "print exactly one JSON object, the ConversationResult, on stdout")
	c.Flags().StringVar(&f.resume, "resume", "", "continue the existing session ID (an error if it does not exist)")
	c.Flags().BoolVarP(&f.continueLast, "continue", "c", false, "continue the most recent session")
	c.Flags().StringSliceVar(&f.tools, "tools", nil, "tools or toolsets the turns may use, comma-separated (default: all the worker offers; 'talaria tools' lists them)")
	c.Flags().BoolVar(&f.yolo, "yolo", false, "run dangerous commands without asking for approval (blocked ones are still refused)")
	return c
}

var sessionIDPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._~-]{0,127}$`)

func runChat(cmd *cobra.Command, f chatFlags) error {
	ctx := cmd.Context()
	cfg, err := loadConfig(cmd)
	if err != nil {
		return err
	}
	if cmd.Flags().Changed("max-iterations") {
		if f.maxIterations < 1 {
			return usagef("--max-iterations must be at least 1 (got %d)", f.maxIterations)
		}
		cfg.MaxIterations = f.maxIterations
	}
	if f.model != "" {
		cfg.Model.Name = f.model
	}
	if err := talaria.CheckCronTools(f.tools); err != nil {
		return usagef("--tools: %v", err)
	}
	if err := talaria.CheckCronMCPTools(f.tools, slices.Collect(maps.Keys(cfg.MCPServers))); err != nil {
		return usagef("--tools: %v", err)
	}
	if f.yolo {
		cfg.Approvals.Mode = "off"
	}
	if n := countSet(f.session != "", f.resume != "", f.continueLast); n > 1 {
		return usagef("--session, --resume and --continue exclude each other")
	}
	if f.resume != "" && !sessionIDPattern.MatchString(f.resume) {
		return usagef("--resume %q: use 1-128 letters, digits, '.', '_', '~' or '-'", f.resume)
	}
	if f.session != "" && !sessionIDPattern.MatchString(f.session) {
		return usagef("--session %q: use 1-128 letters, digits, '.', '_', '~' or '-'", f.session)
	}
	if cmd.Flags().Changed("query") && strings.TrimSpace(f.query) == "" {
		return usagef("-q needs a non-empty message")
	}
	if f.jsonOut && !cmd.Flags().Changed("query") {
		return usagef("--json needs -q (one turn)")
	}
	workdir, err := os.Getwd()
	if err != nil {
		return usagef("cannot read the working directory: %v", err)
	}
	logger := newLogger(cfg.LogLevel)

	rt, release, err := openRuntime(ctx, cfg, logger)
	if err != nil {
		return err
	}
	defer release()
	if f.yolo && rt.Worker == nil {
		fmt.Fprintln(cmd.ErrOrStderr(), "note: --yolo cannot loosen the approvals of a running talaria serve: its approvals.mode decides (a client may narrow it, never widen it)")
	}

	session, err := chooseSession(ctx, rt, f)
	if err != nil {
		return err
	}
	mode := talaria.BusyMode(cfg.BusyInputMode)
	printer := &streamPrinter{out: cmd.OutOrStdout(), errOut: cmd.ErrOrStderr()}
	// A client of serve says so when serve stops answering during a turn.
	rt.Notify = printer.notice
	onEvent := printer.onEvent
	if f.jsonOut {
		onEvent = nil // stdout carries the JSON result only
	}
	turn := func(msg string) (talaria.ConversationResult, error) {
		in := talaria.WithModel(talaria.TurnTemplate(cfg, workdir), f.model) // -m: this turn's model
		in.SessionID, in.UserMessage, in.Tools = session, msg, talaria.ExpandToolsets(f.tools)
		res, err := rt.RunMessage(ctx, in, mode, onEvent)
		noteModelOverride(cmd.ErrOrStderr(), f.model, f.jsonOut, res, err)
		return res, err
	}
	if cmd.Flags().Changed("query") {
		return oneShot(cmd, cfg, rt, session, f.jsonOut, printer, turn, f.query)
	}
	return repl(cmd, rt, session, turn, printer)
}

// openRuntime connects to a running serve, or starts an embedded runtime with
// a worker, after checking that a model endpoint is configured and answers.
func openRuntime(ctx context.Context, cfg config.Config, logger *slog.Logger) (*talaria.Runtime, func(), error) {
	lock, err := talaria.TryLock(cfg.Home)
	switch {
	case err == nil:
		if err := checkEndpoint(ctx, cfg.Model.Configured(), cfg.Model.Endpoint(), cfg.Model.APIKey); err != nil {
			lock.Release()
			return nil, nil, err
		}
		rt, err := talaria.Start(ctx, cfg, talaria.Options{Worker: true, Logger: logger, Private: true})
		if err != nil {
			lock.Release()
			return nil, nil, usageErr(err)
		}
		return rt, func() { rt.Close(); lock.Release() }, nil
	case errors.Is(err, talaria.ErrLocked):
		info, ierr := waitServeInfo(ctx, cfg.Home)
		if ierr != nil {
			return nil, nil, usagef("%s is in use by another talaria process that is not 'talaria serve'; run 'talaria serve' to share it between commands", cfg.Home)
		}
		warnServeModel(os.Stderr, cfg.Home) // this shell's endpoint or model is not serve's
		// Serve's endpoint is looked at without this shell's key, which is
		// not serve's and must not be sent there.
		if err := checkEndpoint(ctx, info.ModelConfigured, info.ModelEndpoint, ""); err != nil {
			return nil, nil, usagef("talaria serve (pid %d): %v", info.PID, err)
		}
		if err := checkServeDB(cfg, info); err != nil {
			return nil, nil, err
		}
		rt, err := talaria.Connect(ctx, cfg, info, logger)
		if err != nil {
			return nil, nil, usageErr(err)
		}
		rt.Peer = fmt.Sprintf("talaria serve at %s", info.TemporalAddress)
		return rt, rt.Close, nil
	default:
		return nil, nil, usageErr(err)
	}
}

// checkEndpoint fails at once, with how to fix it, when no model endpoint is
// configured or nothing answers there.
func checkEndpoint(ctx context.Context, configured bool, endpoint, key string) error {
	if !configured {
		return usagef("%s", talaria.NoEndpointHelp)
	}
	pingCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := talaria.Ping(pingCtx, talaria.Endpoint{BaseURL: endpoint, APIKey: key}); err != nil {
		return usagef("%v (set the endpoint with 'talaria model set --base-url URL', or OPENAI_BASE_URL where no serve runs)", err)
	}
	return nil
}

// printOutcome explains on errOut a turn that did not complete.
func printOutcome(errOut io.Writer, res talaria.ConversationResult) {
	if !res.Completed {
		msg := fmt.Sprintf("turn ended: %s", res.TurnExitReason)
		if res.Error != nil {
			msg += ": " + plainError(*res.Error)
		}
		fmt.Fprintf(errOut, "talaria: %s (session %s)\n", msg, res.SessionID)
	}
}

// repl runs one turn per input line until end of input, /exit or Ctrl-C at
// the prompt. Ctrl-C during a turn interrupts the turn (the REPL goes on); a
// second Ctrl-C during the same turn exits.
func repl(cmd *cobra.Command, rt *talaria.Runtime, session string, turn func(string) (talaria.ConversationResult, error), printer *streamPrinter) error {
	ctx := cmd.Context()
	errOut := cmd.ErrOrStderr()
	fmt.Fprintf(errOut, "talaria chat — session %s. Type /exit or Ctrl-D to quit; Ctrl-C stops a running turn; /steer TEXT redirects it.\n", session)
	lines := readLines(cmd.InOrStdin())
	var last *talaria.ConversationResult
	var ahead []string // lines typed while a turn ran
	eof := false
	for {
		fmt.Fprint(errOut, "> ")
		var line string
		switch {
		case len(ahead) > 0:
			line, ahead = ahead[0], ahead[1:]
		case eof:
			fmt.Fprintln(errOut)
			return lastStatus(last)
		default:
			select {
			case <-ctx.Done():
				fmt.Fprintln(errOut)
				return lastStatus(last)
			case l, ok := <-lines:
				if !ok {
					fmt.Fprintln(errOut)
					return lastStatus(last)
				}
				line = strings.TrimSpace(l)
			}
		}
		switch line {
		case "":
			continue
		case "/exit", "/quit":
			return lastStatus(last)
		}
		watch := &attendant{rt: rt, session: session, lines: lines, errOut: errOut}
		res, _, err := runInterruptible(ctx, rt, session, func() (talaria.ConversationResult, error) {
			return watch.attend(ctx, func() (talaria.ConversationResult, error) { return turn(line) })
		}, errOut)
		ahead, eof = append(ahead, watch.ahead...), eof || watch.eof
		if err != nil {
			if ctx.Err() != nil {
				return &exitError{code: exitFailure, err: errors.New("interrupted")}
			}
			fmt.Fprintf(errOut, "talaria: %s\n", plainError(oneLine(err)))
			continue
		}
		last = &res
		printer.finish(res)
	}
}

// readLines delivers stdin line by line; the channel closes at end of input.
func readLines(r io.Reader) <-chan string {
	ch := make(chan string)
	go func() {
		defer close(ch)
		in := bufio.NewScanner(r)
		in.Buffer(make([]byte, 0, 64*1024), 4*1024*1024)
		for in.Scan() {
			ch <- in.Text()
		}
	}()
	return ch
}

func lastStatus(last *talaria.ConversationResult) error {
	if last != nil && !last.Completed {
		return &exitError{code: exitFailure}
	}
	return nil
}

// newSessionID returns a fresh, sortable session id.
func newSessionID() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return time.Now().UTC().Format("20060102-150405") + "-" + hex.EncodeToString(b[:])
}

// chooseSession picks the session: --session (created when new), --resume
// (must exist), --continue (the most recent), or a fresh one.
func chooseSession(ctx context.Context, rt *talaria.Runtime, f chatFlags) (string, error) {
	switch {
	case f.resume != "":
		if _, err := rt.Store.Session(ctx, f.resume); err != nil {
			return "", usagef("--resume %s: no such session (see 'talaria sessions list')", f.resume)
		}
		return f.resume, nil
	case f.continueLast:
		recent, err := rt.Store.VisibleSessions(ctx, 1)
		if err != nil {
			return "", err
		}
		if len(recent) == 0 {
			return "", usagef("--continue: there is no session yet")
		}
		return recent[0].ID, nil
	case f.session != "":
		return f.session, nil
	}
	return newSessionID(), nil
}

func countSet(flags ...bool) int {
	n := 0
	for _, f := range flags {
		if f {
			n++
		}
	}
	return n
}

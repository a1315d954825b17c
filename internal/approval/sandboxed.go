package approval

import (
	"strconv"

	"github.com/talaria-agent/talaria/internal/turnapi"
)

// Where is where a command runs, for [AssessIn].
type Where struct {
	// Sandboxed: in the kernel sandbox, which holds writes to the
	// writable roots and hides Talaria's home and the user's credentials.
	Sandboxed bool
	// Writable: the sandbox lets it write the working directory and the
	// write roots (workspace-write); false in read-only mode.
	Writable bool
	// Network: the sandbox lets it reach the network.
	Network bool
}

// sandboxAsk are the Dangerous rules that still ask inside a sandbox that
// can write: what the command can destroy lies in the writable roots, and
// text whose commands nobody can read (built by the shell, fed to a shell
// on its input, unparsable) may destroy it as well as anything.
var sandboxAsk = []string{RuleRecursiveDelete, RuleGitClean, RuleGitResetHard, RuleGitDiscard,
	RuleDynamicCommand, RuleUnparsable, RuleTooComplex}

// sandboxAskNetwork still ask when the sandbox reaches the network: they
// change or read things elsewhere.
var sandboxAskNetwork = []string{RuleGitForcePush, RuleSQLDrop, RuleCloudMetadata}

// AssessIn classifies command for where it runs. Outside a sandbox it is
// Assess with an allowlist: what Assess finds, and every command that is
// not known to only read (rule not_read_only: writes, network clients,
// interpreters, builds, talaria itself) asks. Inside one, the kernel is the boundary: Blocked
// stays Blocked (it never runs), and of the Dangerous findings only those
// about what the sandbox leaves within reach still ask — deleting or
// discarding work in the writable roots, and, with the network on, force
// pushes, SQL drops and cloud metadata; every other command is Safe.
func AssessIn(command string, w Where) turnapi.Assessment {
	if !w.Sandboxed {
		return (&assessor{allowlist: true}).assess(command)
	}
	var keep []string
	if w.Writable {
		keep = append(keep, sandboxAsk...)
	}
	if w.Network {
		keep = append(keep, sandboxAskNetwork...)
	}
	return (&assessor{keep: keep, filtered: true}).assess(command)
}

// RuleOutsideSandbox: the model asks to run a command outside the sandbox.
const RuleOutsideSandbox = "outside_sandbox"

// Escalation is the verdict on a request to run command outside the
// sandbox, for reason, given its assessment outside it (a): Blocked stays
// Blocked; anything else is Dangerous, asked of a person, and a grant of
// it covers this one command, as written, outside the sandbox.
func Escalation(a turnapi.Assessment, command, reason string) turnapi.Assessment {
	if a.Risk == turnapi.RiskBlocked {
		return a
	}
	// The whole command, byte for byte (quoted, on one line): a grant
	// covers exactly it, never a command added to it, nor one whose
	// spaces became a new line.
	return turnapi.Assessment{Risk: turnapi.RiskDangerous, Rule: RuleOutsideSandbox,
		Reason: "asks to run outside the sandbox: " + short(reason), Pattern: boundPattern("outside the sandbox: " + strconv.Quote(command))}
}

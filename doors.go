package talaria

import (
	"github.com/talaria-agent/talaria/internal/acpdoor"
)

// The editor door: Talaria as an Agent Client Protocol agent.

// From package acpdoor.
type (
	ACPAgent = acpdoor.Agent
)

var (
	NewACPAgent = acpdoor.New
)

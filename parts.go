package talaria

import (
	"github.com/talaria-agent/talaria/internal/cronjob"
	"github.com/talaria-agent/talaria/internal/injection"
	"github.com/talaria-agent/talaria/internal/llm"
	"github.com/talaria-agent/talaria/internal/mcp"
	"github.com/talaria-agent/talaria/internal/modelinfo"
	"github.com/talaria-agent/talaria/internal/prompt"
	"github.com/talaria-agent/talaria/internal/sandbox"
	"github.com/talaria-agent/talaria/internal/skills"
	"github.com/talaria-agent/talaria/internal/tools"
	"github.com/talaria-agent/talaria/scheduler"
)

// The engine's parts a client configures or inspects: cron jobs, tools, MCP
// servers, skills, memory, model endpoints and the sandbox.

// From package cronjob.
type (
	CronEdit       = cronjob.Edit
	CronFieldError = cronjob.FieldError
	CronRunView    = cronjob.RunView
	CronSpec       = cronjob.Spec
	CronView       = cronjob.View
)

var (
	CheckCronDeliver  = cronjob.CheckDeliver
	CheckCronMCPTools = cronjob.CheckMCPTools
	CheckCronTools    = cronjob.CheckTools
	ErrCronIncomplete = cronjob.ErrIncomplete
	NewCronJob        = cronjob.New
	NewCronRunViews   = cronjob.NewRunViews
	NewCronView       = cronjob.NewView
)

// From package scheduler.
var (
	ParseSchedule = scheduler.ParseSchedule
)

// From package tools.
var (
	ApprovalOf     = tools.ApprovalOf
	ExpandToolsets = tools.ExpandToolsets
	IsQuick        = tools.IsQuick
	PassedEnvNames = tools.PassedEnvNames
	ToolsetNames   = tools.ToolsetNames
	ToolsetOf      = tools.ToolsetOf
)

// From package mcp.
type (
	MCPServers = mcp.Servers
)

var (
	MCPToolName = mcp.ToolName
	NewMCP      = mcp.New
)

// From package skills.
type (
	Skill = skills.Skill
)

var (
	DeleteSkill        = skills.Delete
	ErrNoSkill         = skills.ErrNotFound
	ErrSkillExists     = skills.ErrExists
	ErrSkillInvalid    = skills.ErrInvalid
	ErrSkillSuspicious = skills.ErrSuspicious
	InstallSkill       = skills.Install
	ListSkills         = skills.List
	ReadSkill          = skills.Read
	SkillsDir          = skills.Dir
)

// From package prompt.
const (
	MemoryCap  = prompt.MemoryCap
	MemoryDir  = prompt.MemoryDir
	MemoryFile = prompt.MemoryFile
	UserCap    = prompt.UserCap
	UserFile   = prompt.UserFile
)

var (
	SplitEntries = prompt.SplitEntries
)

// From package injection.
var (
	InjectionSummary = injection.Summary
	MarkInvisible    = injection.Visible
	ScanInjection    = injection.Scan
)

// From package llm.
type (
	Endpoint = llm.Endpoint
)

var (
	Ping      = llm.Ping
	RedactURL = llm.RedactURL
)

// From package modelinfo.
type (
	ModelInfo = modelinfo.Resolved
)

var (
	FormatUSD = modelinfo.FormatUSD
)

// From package sandbox.
const (
	SandboxOff = sandbox.ModeOff
)

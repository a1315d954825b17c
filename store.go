package talaria

import (
	"github.com/talaria-agent/talaria/activities"
	"github.com/talaria-agent/talaria/internal/sessionview"
	"github.com/talaria-agent/talaria/models"
)

// What the store holds, and the views of it every client shows.

// From package models.
type (
	CronJob     = models.CronJob
	CronRun     = models.CronRun
	Event       = models.Event
	Scope       = models.Scope
	Store       = models.Store
	UsageFilter = models.UsageFilter
	UsageRow    = models.UsageRow
)

const (
	RunCompleted = models.RunCompleted
	RunFailed    = models.RunFailed
	RunStarted   = models.RunStarted
)

var (
	ErrCronJobExists   = models.ErrCronJobExists
	ErrInvalidArgument = models.ErrInvalidArgument
	ErrNotFound        = models.ErrNotFound
	OpenExistingStore  = models.OpenExisting
	OpenStore          = models.Open
)

// From package sessionview.
type (
	SearchGroup   = sessionview.SearchGroup
	SessionView   = sessionview.Session
	TurnView      = sessionview.Turn
	SessionDetail = sessionview.Detail
)

const (
	OutcomeDone    = sessionview.OutcomeDone
	OutcomeNotRun  = sessionview.OutcomeNotRun
	OutcomeUnknown = sessionview.OutcomeUnknown
)

var (
	ListSessions    = sessionview.List
	ShowSession     = sessionview.Show
	NewSearchGroups = sessionview.NewSearch
)

// From package activities.
type (
	ToolEvent = activities.ToolEvent
)

var (
	FinalText       = activities.FinalText
	LocalOutputPath = activities.LocalOutputPath
)

package talaria

import (
	"github.com/talaria-agent/talaria/internal/engine"
)

// The runtime: starting, connecting to and controlling a Talaria process.

// From package engine.
type (
	ActivityWait  = engine.ActivityWait
	CurrentWork   = engine.CurrentWork
	KeyPoolStatus = engine.KeyPoolStatus
	ModelConfig   = engine.ModelConfig
	ModelSettings = engine.ModelSettings
	Options       = engine.Options
	Runtime       = engine.Runtime
	ServeInfo     = engine.ServeInfo
	Status        = engine.Status
	TaskStatus    = engine.TaskStatus
)

const (
	DefaultDelivery = engine.DefaultDelivery
	NoEndpointHelp  = engine.NoEndpointHelp
	OriginDelivery  = engine.OriginDelivery
	StoreCheckEvery = engine.StoreCheckEvery
)

var (
	APIKey            = engine.APIKey
	APIKeyPath        = engine.APIKeyPath
	ConfigChanges     = engine.ConfigChanges
	Connect           = engine.Connect
	CredentialPath    = engine.CredentialPath
	DeleteSession     = engine.DeleteSession
	EnsureCredential  = engine.EnsureCredential
	IsNotFound        = engine.IsNotFound
	CheckTemporal     = engine.CheckTemporal
	EnsureHome        = engine.EnsureHome
	ErrLocked         = engine.ErrLocked
	ErrNoConversation = engine.ErrNoConversation
	ErrNoGoal         = engine.ErrNoGoal
	ErrNoRunningTurn  = engine.ErrNoRunningTurn
	ErrNoServe        = engine.ErrNoServe
	ErrNoSession      = engine.ErrNoSession
	ErrSessionInUse   = engine.ErrSessionInUse
	ErrTurnRunning    = engine.ErrTurnRunning
	Every             = engine.Every
	NewModelConfig    = engine.NewModelConfig
	ReadServeInfo     = engine.ReadServeInfo
	RemoveServeInfo   = engine.RemoveServeInfo
	SandboxLine       = engine.SandboxLine
	SchedulerRunning  = engine.SchedulerRunning
	ServeSettings     = engine.ServeSettings
	SessionUILink     = engine.SessionUILink
	SettingsOf        = engine.SettingsOf
	Start             = engine.Start
	ToolCatalog       = engine.ToolCatalog
	ToolPolicy        = engine.ToolPolicy
	TryLock           = engine.TryLock
	TurnTemplate      = engine.TurnTemplate
	UIToken           = engine.UIToken
	UnattendedTools   = engine.UnattendedTools
	WithModel         = engine.WithModel
	WriteServeInfo    = engine.WriteServeInfo
)

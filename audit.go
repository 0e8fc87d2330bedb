package warden

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// OutputLimit is the most output bytes an audit entry keeps.
const OutputLimit = 1024

// AuditEntry is one row of the audit log: one decided request. Every text field
// holds redacted values only. Seq, PrevHash and Hash are set by the store.
type AuditEntry struct {
	Seq         int64           `json:"seq"`
	ID          string          `json:"id"`
	TraceID     string          `json:"trace_id"`
	CreatedAt   time.Time       `json:"created_at"`
	Capability  string          `json:"capability"`
	Action      string          `json:"action"`
	Resource    string          `json:"resource"`
	Tool        string          `json:"tool,omitempty"`
	Tier        Tier            `json:"tier"`
	Args        json.RawMessage `json:"args,omitempty"`
	Context     string          `json:"context,omitempty"`
	RequestedBy string          `json:"requested_by,omitempty"`
	Autonomous  bool            `json:"autonomous"`
	Session     string          `json:"session,omitempty"`
	Host        string          `json:"host,omitempty"`
	Raw         json.RawMessage `json:"raw,omitempty"`
	Verdict     Verdict         `json:"verdict"`
	Blocked     bool            `json:"blocked"`
	BlockReason string          `json:"block_reason,omitempty"`
	Reason      string          `json:"reason"`
	Rule        string          `json:"rule"`
	Result      json.RawMessage `json:"result,omitempty"`
	Output      string          `json:"output,omitempty"`
	Error       string          `json:"error,omitempty"`
	Duration    time.Duration   `json:"duration_ns"`
	Stages      []StageAnswer   `json:"stages"`
	PrevHash    string          `json:"prev_hash"`
	Hash        string          `json:"hash"`
}

// Severity ranks a security event.
type Severity string

const (
	SevInfo     Severity = "info"
	SevWarn     Severity = "warn"
	SevError    Severity = "error"
	SevCritical Severity = "critical"
)

// Valid reports whether s is one of the four severities.
func (s Severity) Valid() bool {
	switch s {
	case SevInfo, SevWarn, SevError, SevCritical:
		return true
	}
	return false
}

// Security event types written by the foundation; later capabilities add more.
const (
	EventKillSwitchOn  = "kill_switch_on"
	EventKillSwitchOff = "kill_switch_off"
	EventConfigInvalid = "config_invalid"
	EventConfigChanged = "config_changed"
	// EventActionResult records what an allowed action did (bytes written, an
	// exit status, an error), linked to its decision by trace id.
	EventActionResult = "action_result"
	// EventSandboxLifecycle records a long-lived sandbox changing state
	// (initializing, ready, degraded, recovering, stopping, stopped).
	EventSandboxLifecycle = "sandbox_lifecycle"
	// EventEgressRequest is the egress proxy's log line for one request or
	// tunnel: who, method, host, port, a hash of the path, status, bytes and
	// the decision. Never a path, a body or a header value.
	EventEgressRequest = "egress_request"
	// EventSecretLeak says the egress proxy refused a request carrying a
	// secret placeholder somewhere it may not go.
	EventSecretLeak = "secret_placeholder_refused"
	// EventApprovalRequested, EventApprovalAnswered and EventApprovalExpired
	// follow one approval from its ask to its end; EventPolicyRuleAdded
	// records an "always" answer written into the policy file.
	EventApprovalRequested = "approval_requested"
	EventApprovalAnswered  = "approval_answered"
	EventApprovalExpired   = "approval_expired"
	EventPolicyRuleAdded   = "policy_rule_added"
	// EventHostEscalation (warn) records a human's "run on host" answer
	// (warden.AnswerHost): one shell command leaves the sandbox and runs on
	// the host, unconfined. It names the command, who answered and through
	// which channel.
	EventHostEscalation = "host_escalation"
	// EventApprovedRun (info) records that a contained command ran on the
	// approval a hook had just used for the same command: the human's one
	// answer covers the hook's decision and the sandboxed run it rewrote
	// the command into.
	EventApprovedRun = "approved_run"
	// EventWorkSaved (info) records that warden exec saved the uncommitted
	// work of a git work tree before running a command that discards it
	// (a shell.git.saved decision): the repository, the snapshot's id and
	// ref, and the command, under the command's trace id. `warden undo`
	// brings it back.
	EventWorkSaved = "work_saved"
	// EventWorkRestored (info) records that `warden undo` restored a
	// snapshot in a repository, and the snapshot it saved of what was
	// there before.
	EventWorkRestored = "work_restored"
	// EventGitQuarantined (warn) records that a sandboxed command created
	// or changed a git repository inside the project that git on the host
	// enters by itself (a gitlink in the index, a git directory under
	// .git/modules), and that warden moved its config keys that run
	// programs and its hooks into its quarantine: the git directory, how
	// git reaches it, what moved, and where (a RESTORE.txt there says how
	// to put it back). Severity error when something could not be moved.
	EventGitQuarantined = "git_quarantined"
	// EventInjectionFound (warn) records a tool output the injection
	// scanner flagged, after the call ran: the host, session and tool, the
	// score, the categories and the flagged text (redacted). The model was
	// warned that it is data, not instructions.
	EventInjectionFound = "injection_found"
	// EventHostApproved, EventHostRanDenied and EventHostRanUndecided come
	// from a host that reports a call after it ran (Claude Code's
	// PostToolUse), under the trace id of the call's decision: the user
	// approved an ask at the host's own prompt; the host ran a call warden
	// denied; the host ran a call warden has no decision for.
	EventHostApproved     = "host_approved"
	EventHostRanDenied    = "host_ran_denied"
	EventHostRanUndecided = "host_ran_undecided"
	// EventSigningSubmitted, EventSigningApproved and EventSigningRejected
	// follow one signing request: submitted with what it would sign, then
	// signed (with the policy decision and whether a human confirmed) or
	// refused (with the decision or the failure). Never key material.
	EventSigningSubmitted = "signing_request_submitted"
	EventSigningApproved  = "signing_request_approved"
	EventSigningRejected  = "signing_request_rejected"
	// EventSigningUnavailable (critical) records that the daemon started
	// without signing because its key could not be unlocked (no passphrase
	// source, an unsafe passphrase file, a wrong passphrase): everything
	// else runs, and the signing endpoints refuse saying why.
	EventSigningUnavailable = "signing_unavailable"
	// EventAuditLost (critical) records that the audit log is not what the
	// home's chain anchor says it recorded: the database deleted, cut short
	// or replaced, or the spool's tail gone. It is written where it survives
	// (the spool) and enters the new chain when the home is recovered.
	EventAuditLost = "audit_log_lost"
	// EventAuditRecovered (critical) is the first row of a chain started by
	// `warden audit recover`: what was lost, the anchor the old chain had,
	// and where what was left of it was kept.
	EventAuditRecovered = "audit_log_recovered"
	// EventAuditAnchored (warn) records that a home from before chain
	// anchors was anchored, taking its rows as they were.
	EventAuditAnchored = "audit_log_anchored"
)

// SecurityEvent is one row of the security event log. Metadata holds redacted
// values only. Seq, PrevHash and Hash are set by the store.
type SecurityEvent struct {
	Seq       int64           `json:"seq"`
	ID        string          `json:"id"`
	TraceID   string          `json:"trace_id,omitempty"`
	CreatedAt time.Time       `json:"created_at"`
	Type      string          `json:"type"`
	Severity  Severity        `json:"severity"`
	Summary   string          `json:"summary"`
	Metadata  json.RawMessage `json:"metadata,omitempty"`
	PrevHash  string          `json:"prev_hash"`
	Hash      string          `json:"hash"`
}

// AuditFilter selects audit entries. Zero fields do not filter. Rows come back in
// log order; with Limit > 0, only the newest Limit matching rows.
type AuditFilter struct {
	Since, Until time.Time
	Capability   string
	Tool         string
	Verdict      string // a verdict name, or empty
	Blocked      *bool
	RequestedBy  string
	TraceID      string
	AfterSeq     int64 // only rows with Seq > AfterSeq (for tailing)
	Limit        int
}

// EventFilter selects security events; zero fields do not filter.
type EventFilter struct {
	Since       time.Time
	Type        string
	MinSeverity Severity
	AfterSeq    int64
	Limit       int
}

// Debit asks the store to move Amount into the spend ledger atomically with the
// audit row, only if the amount spent since Since plus Amount stays within Cap.
// A Debit with a zero Amount and a zero Cap moves no funds: it only takes its
// Slot.
type Debit struct {
	Amount USD
	Cap    USD
	Since  time.Time
	// Slot, when set, also takes one slot of a rate-limited kind in the same
	// transaction (see RateSlot).
	Slot *RateSlot
}

// MovesFunds reports whether the debit has a spend part to check and record.
func (d *Debit) MovesFunds() bool { return d.Amount != 0 || d.Cap != 0 }

// CapExceededError is returned by AuditStore.Record when a Debit does not fit.
// Nothing was written.
type CapExceededError struct {
	Spent, Amount, Cap USD
}

func (e *CapExceededError) Error() string {
	return fmt.Sprintf("daily spend cap: $%s already spent, $%s more would exceed the $%s cap", e.Spent, e.Amount, e.Cap)
}

// DebitRefusal is the refusal of a Debit that err holds, for a store's
// Record to return as is: a *HoldsExceededError, else a *CapExceededError,
// a *RateExceededError or a *ReplayError; nil when err is a failure rather
// than a refusal.
func DebitRefusal(err error) error {
	var (
		capErr    *CapExceededError
		rateErr   *RateExceededError
		holdsErr  *HoldsExceededError
		replayErr *ReplayError
	)
	switch {
	case errors.As(err, &holdsErr):
		return holdsErr
	case errors.As(err, &capErr):
		return capErr
	case errors.As(err, &rateErr):
		return rateErr
	case errors.As(err, &replayErr):
		return replayErr
	}
	return nil
}

// ChainBreak names the first row whose hash chain does not verify.
type ChainBreak struct {
	Table   string `json:"table"` // "audit" or "security_events"
	Seq     int64  `json:"seq"`
	ID      string `json:"id"`
	TraceID string `json:"trace_id,omitempty"`
	Why     string `json:"why"`
}

// VerifyReport is the result of walking the audit chains.
type VerifyReport struct {
	AuditRows  int64       `json:"audit_rows"`
	EventRows  int64       `json:"event_rows"`
	FirstBreak *ChainBreak `json:"first_break,omitempty"`
	// Checkpoints counts the keyed checkpoints whose MAC verified and that
	// the chains pass through.
	Checkpoints int64 `json:"checkpoints"`
	// Missing names, one sentence each, what the store once recorded and no
	// longer holds: the database, rows N to M of a chain, the spool's tail,
	// the anchor or its key. Empty when nothing is missing.
	Missing []string `json:"missing,omitempty"`
}

// OK reports whether every row verified and nothing is missing.
func (r *VerifyReport) OK() bool { return r.FirstBreak == nil && len(r.Missing) == 0 }

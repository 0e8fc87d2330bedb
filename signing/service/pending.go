package service

import (
	"context"
	"sort"
	"sync"
	"time"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/approval"
)

// Pending is one signing request waiting for a human.
type Pending struct {
	ApprovalID string    `json:"approvalId"`
	RequestID  string    `json:"requestId,omitempty"`
	TraceID    string    `json:"traceId"`
	Method     string    `json:"method"`
	Summary    string    `json:"summary"`
	Reason     string    `json:"reason"`
	CreatedAt  time.Time `json:"createdAt"`
	ExpiresAt  time.Time `json:"expiresAt"`
}

// park keeps an ask until it ends.
func (s *Service) park(id string, p *pendingSign) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pending == nil {
		s.pending = map[string]*pendingSign{}
	}
	s.pending[id] = p
}

// lock returns the mutex that makes one finisher per approval.
func (s *Service) lock(id string) *sync.Mutex {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.locks == nil {
		s.locks = map[string]*sync.Mutex{}
	}
	m, ok := s.locks[id]
	if !ok {
		m = &sync.Mutex{}
		s.locks[id] = m
	}
	return m
}

// finish settles the ask id once its approval has ended: an approved one is
// decided again under the current policy (the grant is used up there) and
// signed if still allowed; a denied or expired one is refused and its slot
// given back. Whoever comes first (the approver, the waiting agent, a poll)
// does it; the others get the same result. A still-pending approval returns a
// pending result.
func (s *Service) finish(ctx context.Context, id string) (Result, error) {
	m := s.lock(id)
	m.Lock()
	defer m.Unlock()
	s.mu.Lock()
	res, done := s.results[id]
	p := s.pending[id]
	s.mu.Unlock()
	if done {
		return res, nil
	}
	if p == nil {
		return Result{}, warden.Errorf(warden.ENotFound, "no signing request waits on approval %s in this warden", id).
			WithHint("`GET /api/sandbox/sign/pending` lists the pending ones; a request made before warden restarted must be submitted again")
	}
	a, err := s.Gate().Approvals.Get(ctx, id)
	if err != nil {
		return Result{}, err
	}
	if a.State == warden.ApprovalPending {
		return Result{Pending: true, RequestID: p.req.RequestID, PolicyDecision: decisionOf(p.decision),
			Error: "waiting for a human to approve: " + p.decision.Reason}, nil
	}
	d, err := s.Gate().Await(ctx, p.wreq, p.decision)
	if err != nil {
		return Result{}, err
	}
	human := a.State == warden.ApprovalApproved
	if d.Verdict == warden.Allow {
		res, err = s.sign(ctx, p.req, p.wreq, d, human)
	} else {
		if rerr := s.Gate().Release(ctx, p.wreq.TraceID, "approval "+string(a.State)); rerr != nil {
			return Result{}, rerr
		}
		res = Result{RequestID: p.req.RequestID, PolicyDecision: decisionOf(d), HumanConfirmed: false, Error: d.Reason}
		err = s.rejected(ctx, p.wreq, d, "not signed: "+d.Reason)
	}
	if err != nil {
		return res, err
	}
	s.keep(id, res)
	return res, nil
}

// keep stores an ended request's result for late polls, forgetting the
// oldest past maxResults.
func (s *Service) keep(id string, res Result) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.results == nil {
		s.results = map[string]Result{}
	}
	delete(s.pending, id)
	delete(s.locks, id)
	s.results[id] = res
	s.order = append(s.order, id)
	for len(s.order) > maxResults {
		delete(s.results, s.order[0])
		s.order = s.order[1:]
	}
}

// Answer answers the pending signing request id as who (approve or deny)
// and settles it: an approval signs it now, under the current policy. Only
// an operator may call it; the agent's credential never reaches it.
func (s *Service) Answer(ctx context.Context, id string, approve bool, who approval.Who) (Result, error) {
	s.mu.Lock()
	_, ok := s.pending[id]
	s.mu.Unlock()
	if !ok {
		if res, done := s.result(id); done {
			return res, warden.Errorf(warden.EConflict, "signing request %s has already ended", id)
		}
		return Result{}, warden.Errorf(warden.ENotFound, "no signing request waits on approval %s", id).
			WithHint("`GET /api/sandbox/sign/pending` lists the pending ones")
	}
	ans := warden.AnswerDeny
	if approve {
		ans = warden.AnswerOnce
	}
	if _, err := s.Gate().Approvals.Answer(ctx, id, ans, who); err != nil {
		return Result{}, err
	}
	return s.finish(ctx, id)
}

// Status is the state of the signing request waiting (or ended) on approval
// id: pending, or its result. Polling an ended approval settles it.
func (s *Service) Status(ctx context.Context, id string) (Result, error) {
	return s.finish(ctx, id)
}

func (s *Service) result(id string) (Result, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.results[id]
	return r, ok
}

// Pending lists the signing requests waiting for a human, oldest first.
func (s *Service) Pending(ctx context.Context) ([]Pending, error) {
	s.mu.Lock()
	ids := make([]string, 0, len(s.pending))
	ps := map[string]*pendingSign{}
	for id, p := range s.pending {
		ids = append(ids, id)
		ps[id] = p
	}
	s.mu.Unlock()
	var out []Pending
	for _, id := range ids {
		a, err := s.Gate().Approvals.Get(ctx, id)
		if err != nil {
			return nil, err
		}
		if a.State != warden.ApprovalPending {
			continue
		}
		p := ps[id]
		out = append(out, Pending{ApprovalID: id, RequestID: p.req.RequestID, TraceID: p.wreq.TraceID, Method: p.req.Method,
			Summary: p.wreq.Resource, Reason: p.decision.Reason, CreatedAt: a.CreatedAt, ExpiresAt: a.ExpiresAt})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].CreatedAt.Before(out[j].CreatedAt) })
	return out, nil
}

// Settle ends every parked request whose approval has ended, however it
// ended (answered from the terminal, the console, Telegram; or expired):
// approved ones are signed, the rest refused and their slots given back.
// The daemon calls it periodically, so that a slot is never held by an
// approval nobody polls.
func (s *Service) Settle(ctx context.Context) error {
	s.mu.Lock()
	ids := make([]string, 0, len(s.pending))
	for id := range s.pending {
		ids = append(ids, id)
	}
	s.mu.Unlock()
	for _, id := range ids {
		a, err := s.Gate().Approvals.Get(ctx, id)
		if err != nil {
			return err
		}
		if a.State == warden.ApprovalPending {
			continue
		}
		if _, err := s.finish(ctx, id); err != nil {
			return err
		}
	}
	return nil
}

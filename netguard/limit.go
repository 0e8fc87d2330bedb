package netguard

import (
	"sync"
	"time"
)

// Limits are the per-agent request rates; zero means no limit.
type Limits struct {
	PerMinute, PerHour int
}

// Limiter counts each agent's requests in fixed windows (a minute and an
// hour, each starting at the agent's first request in it). It lives as long
// as the process that owns it: the egress proxy, or later the daemon. Safe
// for concurrent use.
type Limiter struct {
	limits Limits
	mu     sync.Mutex
	agents map[string]*agentWindows
}

type window struct {
	start time.Time
	count int
}

type agentWindows struct{ minute, hour window }

// NewLimiter returns a limiter enforcing l.
func NewLimiter(l Limits) *Limiter {
	return &Limiter{limits: l, agents: map[string]*agentWindows{}}
}

// Take counts one request by agent at now. When a window is full it counts
// nothing and returns false with the time that window resets.
func (l *Limiter) Take(agent string, now time.Time) (ok bool, reset time.Time, limit string) {
	if l == nil {
		return true, time.Time{}, ""
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	w := l.agents[agent]
	if w == nil {
		if len(l.agents) > 4096 {
			l.prune(now)
		}
		w = &agentWindows{}
		l.agents[agent] = w
	}
	if ok, reset := w.minute.room(now, time.Minute, l.limits.PerMinute); !ok {
		return false, reset, "per_minute"
	}
	if ok, reset := w.hour.room(now, time.Hour, l.limits.PerHour); !ok {
		return false, reset, "per_hour"
	}
	w.minute.count++
	w.hour.count++
	return true, time.Time{}, ""
}

// room restarts an expired window and reports whether it has room.
func (w *window) room(now time.Time, span time.Duration, limit int) (bool, time.Time) {
	if w.start.IsZero() || !now.Before(w.start.Add(span)) {
		w.start, w.count = now, 0
	}
	if limit > 0 && w.count >= limit {
		return false, w.start.Add(span)
	}
	return true, time.Time{}
}

// prune forgets agents whose hour window has ended.
func (l *Limiter) prune(now time.Time) {
	for a, w := range l.agents {
		if !now.Before(w.hour.start.Add(time.Hour)) {
			delete(l.agents, a)
		}
	}
}

package walk

// Default budgets (Options fields left zero).
const (
	defaultMaxDepth = 8
	defaultMaxBytes = 64 << 10
	defaultMaxNodes = 20000
)

// budget counts work across all recursion of one Walk.
type budget struct {
	maxDepth, maxBytes, maxNodes int
	nodes                        int
	parsedBytes                  int
	stopped                      bool // a budget ran out: walk no further
}

func newBudget(opt Options) budget {
	b := budget{maxDepth: opt.MaxDepth, maxBytes: opt.MaxBytes, maxNodes: opt.MaxNodes}
	if b.maxDepth <= 0 {
		b.maxDepth = defaultMaxDepth
	}
	if b.maxBytes <= 0 {
		b.maxBytes = defaultMaxBytes
	}
	if b.maxNodes <= 0 {
		b.maxNodes = defaultMaxNodes
	}
	return b
}

// node counts one visited node and stops the walk when the budget is spent.
func (w *walker) node() bool {
	w.b.nodes++
	if w.b.nodes > w.b.maxNodes && !w.b.stopped {
		w.b.stopped = true
		w.issue(BudgetExceeded, "more than the node budget of AST nodes", Span{0, len(w.src)})
	}
	return !w.b.stopped
}

// allowParse charges n bytes of code string to the size budget; all code
// parsed in one Walk may total four times MaxBytes.
func (w *walker) allowParse(n int, sp Span) bool {
	w.b.parsedBytes += n
	if n > w.b.maxBytes || w.b.parsedBytes > 4*w.b.maxBytes {
		w.issue(BudgetExceeded, "code string exceeds the size budget", sp)
		return false
	}
	return true
}

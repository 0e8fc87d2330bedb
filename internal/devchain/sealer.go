package devchain

import (
	"errors"
	"sync"

	"github.com/ethereum/go-ethereum/core"
	"github.com/ethereum/go-ethereum/core/txpool"
	"github.com/ethereum/go-ethereum/eth/catalyst"
	"github.com/ethereum/go-ethereum/event"
)

// sealer is the on-demand block production of geth --dev --dev.period 0:
// when transactions enter the pool, the simulated beacon seals a block, and
// keeps sealing while the pool still holds executable transactions.
//
// It does what go-ethereum's own on-demand loop (the unexported
// simulatedBeaconAPI.loop, started by catalyst.RegisterSimulatedBeaconAPIs)
// does, with the same two goroutines, but it subscribes to the pool before
// Start returns instead of inside the goroutine. In v1.17.10 the late
// subscription (simulated_beacon_api.go:51) misses a transaction sent right
// after startup, and if the node is closed before the goroutine runs,
// SubscribeTransactions returns nil from the closed pool and the deferred
// Unsubscribe (line 55) panics, killing the process. The sealer also waits for
// an in-flight Commit to finish before the node is closed.
type sealer struct {
	beacon *catalyst.SimulatedBeacon
	pool   *txpool.TxPool
	sub    event.Subscription

	stop     chan struct{}
	stopOnce sync.Once
	done     sync.WaitGroup
}

// startSealer subscribes to pool and starts sealing with beacon. The node
// must be running; stop the sealer before closing it. The beacon must not be
// driven by anything else (SimulatedBeacon is not safe for concurrent
// commits, and TxPool.Sync, which every commit calls, keeps one waiter: an
// earlier concurrent caller is overwritten and blocks forever).
func startSealer(beacon *catalyst.SimulatedBeacon, pool *txpool.TxPool) (*sealer, error) {
	newTxs := make(chan core.NewTxsEvent)
	sub := pool.SubscribeTransactions(newTxs, true)
	if sub == nil {
		return nil, errors.New("transaction pool is closed")
	}
	s := &sealer{beacon: beacon, pool: pool, sub: sub, stop: make(chan struct{})}
	// The pool's feed blocks until every subscriber takes the event, and a
	// commit waits for the pool (TxPool.Sync). So events are taken by one
	// goroutine that is always ready, and commits run on another, signalled
	// through a one-slot channel that coalesces bursts.
	doCommit := make(chan struct{}, 1)
	s.done.Add(2)
	go func() {
		defer s.done.Done()
		defer close(doCommit)
		defer sub.Unsubscribe()
		for {
			select {
			case <-s.stop:
				return
			case <-sub.Err(): // the pool closed
				return
			case <-newTxs:
				select {
				case doCommit <- struct{}{}:
				default: // a commit is already due
				}
			}
		}
	}()
	go func() {
		defer s.done.Done()
		for range doCommit {
			s.sealPending()
		}
	}()
	return s, nil
}

// sealPending seals a block, then more while the pool still has executable
// transactions (as go-ethereum's loop does, this spins if the miner will not
// include one, e.g. its fee cap is below the base fee, until base fee falls).
func (s *sealer) sealPending() {
	for {
		select {
		case <-s.stop:
			return
		default:
		}
		s.beacon.Commit()
		if err := s.pool.Sync(); err != nil {
			return // the pool closed
		}
		if executable, _ := s.pool.Stats(); executable == 0 {
			return
		}
	}
}

// close stops sealing and waits until no commit is in flight. It is
// idempotent.
func (s *sealer) close() {
	s.stopOnce.Do(func() { close(s.stop) })
	s.done.Wait()
}

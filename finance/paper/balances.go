package paper

import (
	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/finance"
)

// dust is the value, in dollars, below which a shortfall is rounding and a
// remainder is dropped: one micro-dollar, warden.USD's unit.
const dust = 1.0 / warden.MicrosPerDollar

// debit takes from b what an order of amount pays in t: amount of cash for
// a stablecoin, else units of t (worth amount at price). It returns the
// units taken: all of the holding when units exceed it by less than a
// micro-dollar. what names the order for the error.
func debit(b *Book, t finance.Token, units, price float64, amount warden.USD, what string) (float64, error) {
	if isCash(t) {
		if b.Cash < amount {
			return 0, warden.Errorf(warden.EConflict, "the paper wallet holds $%s of cash; the %s needs $%s", b.Cash, what, amount).Wrap(ErrInsufficientFunds)
		}
		b.Cash -= amount
		return amount.Dollars(), nil
	}
	key := t.Key()
	held := b.Balances[key]
	if units > held {
		if (units-held)*price >= dust {
			return 0, warden.Errorf(warden.EConflict, "the paper wallet holds %g %s (worth $%s); the %s needs %g",
				held, t.Symbol, finance.USDOf(held*price), what, units).Wrap(ErrInsufficientFunds)
		}
		units = held
	}
	left := held - units
	if left*price < dust {
		delete(b.Balances, key)
		delete(b.Tokens, key)
	} else {
		b.Balances[key] = left
	}
	return units, nil
}

// credit adds units of t to b: dollars of cash for a stablecoin.
func credit(b *Book, t finance.Token, units float64) {
	if isCash(t) {
		b.Cash += finance.USDOf(units)
		return
	}
	key := t.Key()
	b.Balances[key] += units
	b.Tokens[key] = t
}

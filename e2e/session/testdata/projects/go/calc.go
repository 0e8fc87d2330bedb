// Package calc is a small calculator library.
package calc

import "errors"

// ErrDivideByZero is returned by Div when the divisor is zero.
var ErrDivideByZero = errors.New("calc: divide by zero")

// Add returns a + b.
func Add(a, b int) int { return a + b }

// Sub returns a - b.
func Sub(a, b int) int { return a - b }

// Mul returns a * b.
// TODO(calc): overflow checks
func Mul(a, b int) int { return a * b }

// Div returns a / b, or ErrDivideByZero.
func Div(a, b int) (int, error) {
	if b == 0 {
		return 0, ErrDivideByZero
	}
	return a / b, nil
}

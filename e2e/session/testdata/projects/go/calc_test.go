package calc

import (
	"errors"
	"testing"
)

func TestAdd(t *testing.T) {
	cases := []struct{ a, b, want int }{{1, 2, 3}, {-1, 1, 0}, {0, 0, 0}}
	for _, c := range cases {
		if got := Add(c.a, c.b); got != c.want {
			t.Errorf("Add(%d, %d) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}

func TestMul(t *testing.T) {
	if got := Mul(6, 7); got != 42 {
		t.Errorf("Mul(6, 7) = %d, want 42", got)
	}
}

func TestDiv(t *testing.T) {
	if got, err := Div(9, 3); got != 3 || err != nil {
		t.Errorf("Div(9, 3) = %d, %v; want 3, nil", got, err)
	}
	if _, err := Div(1, 0); !errors.Is(err, ErrDivideByZero) {
		t.Errorf("Div(1, 0) error = %v, want ErrDivideByZero", err)
	}
}

func TestMedian(t *testing.T) {
	if got := Median([]float64{3, 1, 2}); got != 2 {
		t.Errorf("Median = %v, want 2", got)
	}
	if got := Mean([]float64{1, 2, 3, 4}); got != 2.5 {
		t.Errorf("Mean = %v, want 2.5", got)
	}
}

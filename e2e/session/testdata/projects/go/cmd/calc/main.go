// Command calc does arithmetic: calc add|sub|mul|div A B.
package main

import (
	"fmt"
	"os"
	"strconv"

	"example.com/calc"
)

func main() {
	if len(os.Args) != 4 {
		fmt.Fprintln(os.Stderr, "usage: calc add|sub|mul|div A B")
		os.Exit(2)
	}
	a, err1 := strconv.Atoi(os.Args[2])
	b, err2 := strconv.Atoi(os.Args[3])
	if err1 != nil || err2 != nil {
		fmt.Fprintln(os.Stderr, "calc: A and B must be integers")
		os.Exit(2)
	}
	switch os.Args[1] {
	case "add":
		fmt.Println(calc.Add(a, b))
	case "sub":
		fmt.Println(calc.Sub(a, b))
	case "mul":
		fmt.Println(calc.Mul(a, b))
	case "div":
		q, err := calc.Div(a, b)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Println(q)
	default:
		fmt.Fprintf(os.Stderr, "calc: unknown operation %q\n", os.Args[1])
		os.Exit(2)
	}
}

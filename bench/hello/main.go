// Command hello is the baseline for warden's cold-start benchmark: a plain Go
// hello-world, built and timed in the same run as `warden check`.
package main

import "fmt"

func main() { fmt.Println("hello, world") }

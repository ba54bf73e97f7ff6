// recgo.go - a Go program linked with cgo (so dynamically linked, and the
// agent can enter it), built by test/cli/record.t without symbols or
// DWARF (-ldflags=-s -w), as Debian ships Go programs: its functions are
// named from the table Go keeps for its runtime (.gopclntab).
package main

// unsigned long spin(unsigned long n)
// {
//	unsigned long s = 0;
//	for (unsigned long i = 0; i < n; i++)
//		s = s * 31 + (i ^ (s >> 3));
//	return s;
// }
import "C"

import (
	"fmt"
	"os"
	"strconv"
)

// Its loop is lines 27-28: test/cli/record.t's --lines cases look for them.
//
//go:noinline
func hotLoop(n int) uint64 {
	var s uint64
	for i := 0; i < n; i++ {
		s = s*31 + uint64(i) ^ (s >> 7)
	}
	return s
}

//go:noinline
func coldPath(n int) uint64 { return hotLoop(n / 4) }

// C's time, on the thread's stack, under the goroutine that called it
//
//go:noinline
func callC(n int) uint64 { return uint64(C.spin(C.ulong(n))) }

// Garbage: collections whose marking runs on the threads' own stacks
// (runtime.systemstack), for the allocating goroutine (assists) and the
// background workers
//
//go:noinline
func churn(n int) int {
	live := make([]*[8]int, 1<<16)
	sum := 0
	for i := 0; i < n; i++ {
		p := new([8]int)
		p[0] = i
		live[i&(len(live)-1)] = p
		if q := live[(i*7)&(len(live)-1)]; q != nil {
			sum += q[0] & 1
		}
	}
	return sum
}

func main() {
	n, err := strconv.Atoi(os.Args[1])
	if err != nil {
		os.Exit(2)
	}
	if len(os.Args) > 2 && os.Args[2] == "gc" {
		fmt.Println(churn(n))
		return
	}
	fmt.Println(hotLoop(n) + coldPath(n) + callC(n/4))
}

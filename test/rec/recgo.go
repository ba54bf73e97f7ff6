// recgo.go - a Go program linked with cgo (so dynamically linked, and the
// agent can enter it), built by test/cli/record.t without symbols or
// DWARF (-ldflags=-s -w), as Debian ships Go programs: its functions are
// named from the table Go keeps for its runtime (.gopclntab).
package main

// int twice(int x) { return 2 * x; }
import "C"

import (
	"fmt"
	"os"
	"strconv"
)

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

func main() {
	n, err := strconv.Atoi(os.Args[1])
	if err != nil {
		os.Exit(2)
	}
	fmt.Println(hotLoop(n)+coldPath(n), C.twice(2))
}

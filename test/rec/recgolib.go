// recgolib.go - a Go library for C programs (go build -buildmode=c-shared),
// built by test/rec/recgo-build.sh lib with recgolib-main.c: C calls Go
// through crosscall2 and runtime.cgocallback, which runs the Go function
// on a goroutine's stack; test/cli/record.t looks for the C caller under it.
package main

import "C"

// GoHot is called from C (recgolib-main.c).
//
//export GoHot
func GoHot(n C.long) C.long {
	var s int64
	for i := int64(0); i < int64(n); i++ {
		s = s*31 + i ^ (s >> 7)
	}
	return C.long(s)
}

func main() {}

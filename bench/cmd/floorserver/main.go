// Command floorserver is the floor of the transfer benchmark: a minimal
// net/http handler, in its own process as the action server is, that
// streams a PUT body to a file and the file back on GET. It prints its
// address on stdout once it listens.
package main

import (
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
)

func main() {
	file := flag.String("file", "", "where PUT bodies are stored")
	flag.Parse()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(l.Addr().String())
	http.Serve(l, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodPut:
			f, err := os.Create(*file)
			if err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			_, err = io.Copy(f, r.Body)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
			}
		case http.MethodGet:
			f, err := os.Open(*file)
			if err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			defer f.Close()
			io.Copy(w, f) // no Content-Length: chunked, like the server's zip
		}
	}))
}

// Command startfloor is the floor of the start-up and idle-memory rows. It
// links every package action-server links, so the Go runtime starts and
// every package initialises as they do there, then answers GET /alive from
// a one-route gin server. What action-server's start costs beyond this is
// its own work: the sandbox user and workspace, the shell, the routes, the
// file viewer.
//
// It takes action-server's command line and reads only the port (the first
// argument) and --host.
package main

import (
	"fmt"
	"net"
	"net/http"
	"os"
	_ "os/signal"
	_ "os/user"

	"github.com/gin-gonic/gin"

	// What cmd/action-server imports, for their initialisation alone;
	// TestLinksWhatTheServerLinks keeps the list whole.
	_ "github.com/actionserver/actionserver/api"
	_ "github.com/actionserver/actionserver/browser"
	_ "github.com/actionserver/actionserver/executor"
	_ "github.com/actionserver/actionserver/files"
	_ "github.com/actionserver/actionserver/internal/chown"
	_ "github.com/actionserver/actionserver/internal/serverflags"
	_ "github.com/actionserver/actionserver/plugins"
	_ "github.com/actionserver/actionserver/plugins/agentskills"
	_ "github.com/actionserver/actionserver/plugins/jupyter"
	_ "github.com/actionserver/actionserver/plugins/vscode"
	_ "github.com/actionserver/actionserver/server"
	_ "github.com/actionserver/actionserver/shell"
	_ "github.com/actionserver/actionserver/swerex"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: startfloor PORT [--host HOST] [action-server flags]")
		os.Exit(2)
	}
	host := "127.0.0.1"
	for i, a := range os.Args {
		if a == "--host" && i+1 < len(os.Args) {
			host = os.Args[i+1]
		}
	}
	gin.SetMode(gin.ReleaseMode)
	r := gin.New()
	r.GET("/alive", func(c *gin.Context) { c.JSON(http.StatusOK, gin.H{"status": "ok"}) })
	l, err := net.Listen("tcp", net.JoinHostPort(host, os.Args[1]))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	http.Serve(l, r)
}

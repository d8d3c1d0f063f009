package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/actionserver/actionserver/event"
)

// editorError starts the content of an editor call that failed.
const editorError = "ERROR:\n"

func (a *app) readCmd() *cobra.Command {
	var start, end int
	var viewRange string
	var aci bool
	c := &cobra.Command{
		Use:   "read PATH",
		Short: "Print a file of the sandbox (relative paths start at the shell's directory)",
		Example: `  actionctl read src/main.go
  actionctl read --start 10 --end 20 src/main.go
  actionctl read --aci --range 5,9 /workspace/app.py   # numbered, as the editor shows it`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			act := event.NewFileRead(args[0])
			act.Start, act.End = start, end
			if aci || viewRange != "" {
				act.ImplSource = event.ImplOHACI
				if viewRange != "" {
					r, err := parseRange(viewRange)
					if err != nil {
						return &usageError{err}
					}
					act.ViewRange = r
				}
			}
			obs, err := a.client().Execute(cmd.Context(), act)
			if err != nil {
				return err
			}
			return a.printFileObs(obs, false)
		},
	}
	c.Flags().IntVar(&start, "start", 0, "first line (0-based)")
	c.Flags().IntVar(&end, "end", -1, "line to stop before (-1: the end)")
	c.Flags().BoolVar(&aci, "aci", false, "read through the file editor (numbered lines)")
	c.Flags().StringVar(&viewRange, "range", "", "with the editor: lines FIRST,LAST (1-based, LAST -1 for the end)")
	return c
}

func parseRange(s string) ([]int, error) {
	a, b, ok := strings.Cut(s, ",")
	first, err1 := strconv.Atoi(strings.TrimSpace(a))
	last, err2 := strconv.Atoi(strings.TrimSpace(b))
	if !ok || err1 != nil || err2 != nil {
		return nil, fmt.Errorf("--range %q: want FIRST,LAST", s)
	}
	return []int{first, last}, nil
}

func (a *app) writeCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "write PATH [CONTENT]",
		Short: "Replace a file of the sandbox with CONTENT (or standard input)",
		Long: `Writes CONTENT, or standard input when it is absent or "-", to PATH in the
sandbox, creating missing directories. The server ends the content with a
newline, as agents' writes are.`,
		Example: `  actionctl write notes.txt 'remember the milk'
  go env | actionctl write /workspace/env.txt`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			content, err := argOrStdin(args, 1)
			if err != nil {
				return err
			}
			obs, err := a.client().Execute(cmd.Context(), event.NewFileWrite(args[0], content))
			if err != nil {
				return err
			}
			return a.printFileObs(obs, true)
		},
	}
}

// argOrStdin returns args[i], or standard input when it is missing or "-".
func argOrStdin(args []string, i int) (string, error) {
	if len(args) > i && args[i] != "-" {
		return args[i], nil
	}
	b, err := io.ReadAll(os.Stdin)
	if err != nil {
		return "", fmt.Errorf("read standard input: %w", err)
	}
	return string(b), nil
}

func (a *app) editCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "edit",
		Short: "Run the file editor agents use (view, create, str_replace, insert, undo)",
		Long: `Runs a command of the str_replace file editor on an absolute PATH and prints
its answer, exactly what an agent would read. An editor error goes to
standard error and exits 1.`,
		Example: `  actionctl edit view /workspace
  actionctl edit create /workspace/hello.py 'print("hi")'
  actionctl edit str_replace /workspace/hello.py '"hi"' '"hello"'
  actionctl edit insert /workspace/hello.py 1 'print("bye")'
  actionctl edit undo /workspace/hello.py`,
	}
	run := func(cmd *cobra.Command, act *event.FileEdit) error {
		obs, err := a.client().Execute(cmd.Context(), act)
		if err != nil {
			return err
		}
		return a.printFileObs(obs, false)
	}
	var viewRange string
	view := &cobra.Command{
		Use:   "view PATH",
		Short: "Show a file with numbered lines, or a directory two levels deep",
		Example: `  actionctl edit view /workspace
  actionctl edit view --range 10,20 /workspace/app.py`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if viewRange == "" {
				return run(cmd, event.NewFileEdit("view", args[0]))
			}
			// The editor takes a range only through an oh_aci read.
			r, err := parseRange(viewRange)
			if err != nil {
				return &usageError{err}
			}
			act := event.NewFileRead(args[0])
			act.ImplSource, act.ViewRange = event.ImplOHACI, r
			obs, err := a.client().Execute(cmd.Context(), act)
			if err != nil {
				return err
			}
			return a.printFileObs(obs, false)
		},
	}
	view.Flags().StringVar(&viewRange, "range", "", "lines FIRST,LAST (1-based, LAST -1 for the end)")
	create := &cobra.Command{
		Use:   "create PATH [TEXT]",
		Short: "Create a file with TEXT (or standard input); existing files are refused",
		Example: `  actionctl edit create /workspace/hello.py 'print("hi")'
  actionctl edit create /workspace/app.py - < app.py`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			text, err := argOrStdin(args, 1)
			if err != nil {
				return err
			}
			act := event.NewFileEdit("create", args[0])
			act.FileText = &text
			return run(cmd, act)
		},
	}
	replace := &cobra.Command{
		Use:   "str_replace PATH OLD [NEW]",
		Short: "Replace the one occurrence of OLD with NEW (empty when absent)",
		Example: `  actionctl edit str_replace /workspace/hello.py '"hi"' '"hello"'
  actionctl edit str_replace /workspace/hello.py 'print("debug")'   # delete it`,
		Args: cobra.RangeArgs(2, 3),
		RunE: func(cmd *cobra.Command, args []string) error {
			act := event.NewFileEdit("str_replace", args[0])
			act.OldStr = &args[1]
			if len(args) == 3 {
				act.NewStr = &args[2]
			}
			return run(cmd, act)
		},
	}
	insert := &cobra.Command{
		Use:   "insert PATH LINE [TEXT]",
		Short: "Insert TEXT (or standard input) after line LINE (0: at the top)",
		Example: `  actionctl edit insert /workspace/hello.py 0 '#!/usr/bin/env python3'
  actionctl edit insert /workspace/hello.py 1 'print("bye")'`,
		Args: cobra.RangeArgs(2, 3),
		RunE: func(cmd *cobra.Command, args []string) error {
			text, err := argOrStdin(args, 2)
			if err != nil {
				return err
			}
			act := event.NewFileEdit("insert", args[0])
			act.NewStr = &text
			act.InsertLine = &event.InsertLine{Raw: args[1], Quoted: true}
			return run(cmd, act)
		},
	}
	undo := &cobra.Command{
		Use:     "undo PATH",
		Short:   "Undo the last edit of a file",
		Example: "  actionctl edit undo /workspace/hello.py",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return run(cmd, event.NewFileEdit("undo_edit", args[0]))
		},
	}
	c.AddCommand(view, create, replace, insert, undo)
	return c
}

// printFileObs prints a file action's observation: its content on
// standard output, or what went wrong on standard error with exit code 1.
// quiet prints nothing on success (write answers with no content).
func (a *app) printFileObs(obs event.Observation, quiet bool) error {
	if a.json {
		if _, ok := obs.(*event.ErrorObservation); ok || strings.HasPrefix(obs.Text(), editorError) {
			a.code = exitError
		}
		return a.printJSON(obs)
	}
	text := obs.Text()
	switch {
	case obs.Type() == event.ObsError:
		fmt.Fprintln(a.stderr, text)
		a.code = exitError
	case strings.HasPrefix(text, editorError):
		fmt.Fprintln(a.stderr, strings.TrimPrefix(text, editorError))
		a.code = exitError
	case quiet:
	case strings.HasSuffix(text, "\n"):
		fmt.Fprint(a.stdout, text)
	default:
		fmt.Fprintln(a.stdout, text)
	}
	return nil
}

func (a *app) uploadCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "upload SRC DEST",
		Short: "Copy a local file or directory into the sandbox directory DEST",
		Long: `Copies SRC into the sandbox directory DEST (absolute; created if missing):
a file lands at DEST/<name>, a directory at DEST/<name>/. Content is
streamed; a progress line is shown on a terminal for large transfers.`,
		Example: `  actionctl upload ./data.csv /workspace
  actionctl upload ./repo /workspace`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			fi, err := os.Stat(args[0])
			if err != nil {
				return err
			}
			p := a.newProgress("upload "+filepath.Base(args[0]), treeSize(args[0], fi))
			err = a.client().Upload(cmd.Context(), args[0], args[1], fi.IsDir(), p.update)
			p.done(err)
			if err != nil || !a.json {
				return err
			}
			return a.printJSON(map[string]any{"filename": filepath.Base(args[0]), "destination": args[1], "recursive": fi.IsDir()})
		},
	}
}

// treeSize is the bytes an upload of path will send (its regular files).
func treeSize(path string, fi os.FileInfo) int64 {
	if !fi.IsDir() {
		return fi.Size()
	}
	var n int64
	filepath.Walk(path, func(_ string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() {
			n += fi.Size()
		}
		return nil
	})
	return n
}

func (a *app) downloadCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "download PATH DEST",
		Short: "Save a zip of a sandbox directory to the local file DEST (- for standard output)",
		Example: `  actionctl download /workspace/out out.zip
  actionctl download /workspace/out - | bsdtar -xf -`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if a.json && args[1] == "-" {
				return &usageError{errors.New("--json prints its result on standard output: give DEST a file name")}
			}
			var w io.Writer = a.stdout
			var f *os.File
			if args[1] != "-" {
				var err error
				if f, err = os.Create(args[1]); err != nil {
					return err
				}
				defer f.Close()
				w = f
			}
			p := a.newProgress("download "+filepath.Base(args[0]), 0)
			n, err := a.client().Download(cmd.Context(), args[0], w, p.update)
			p.done(err)
			if err == nil && f != nil {
				err = f.Close()
			}
			if err != nil && f != nil {
				os.Remove(args[1]) // never leave a truncated archive behind
			}
			if err != nil {
				return err
			}
			return a.printOK(map[string]any{"path": args[0], "destination": args[1], "bytes": n})
		},
	}
}

func (a *app) lsCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "ls [PATH]",
		Short: "List a sandbox directory (directories first, with a trailing /)",
		Example: `  actionctl ls
  actionctl ls /workspace/src`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			path := ""
			if len(args) == 1 {
				path = args[0]
			}
			names, err := a.client().ListFiles(cmd.Context(), path)
			if err != nil {
				return err
			}
			if a.json {
				return a.printJSON(names)
			}
			for _, n := range names {
				fmt.Fprintln(a.stdout, n)
			}
			return nil
		},
	}
}

func (a *app) watchCmd() *cobra.Command {
	var recursive bool
	c := &cobra.Command{
		Use:   "watch DIR",
		Short: "Print changes under a sandbox directory as they happen (Ctrl-C stops)",
		Example: `  actionctl watch /workspace
  actionctl watch --json --recursive=false /workspace/src`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			events, err := a.client().Watch(cmd.Context(), args[0], recursive)
			if err != nil {
				return err
			}
			enc := json.NewEncoder(a.stdout)
			for ev := range events {
				if ev.Err != nil {
					return ev.Err
				}
				if a.json {
					if err := enc.Encode(ev); err != nil {
						return err
					}
					continue
				}
				suffix := ""
				if ev.IsDir {
					suffix = "/"
				}
				fmt.Fprintf(a.stdout, "%s %-6s %s%s\n", ev.Time.Local().Format("15:04:05.000"), ev.Op, ev.Path, suffix)
			}
			return nil
		},
	}
	c.Flags().BoolVarP(&recursive, "recursive", "r", true, "also watch every directory below, including new ones")
	return c
}

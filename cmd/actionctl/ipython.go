package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/actionserver/actionserver/event"
)

func (a *app) ipythonCmd() *cobra.Command {
	var timeout time.Duration
	var extra bool
	c := &cobra.Command{
		Use:   "ipython CODE",
		Short: "Run Python in the server's Jupyter kernel (needs --plugins jupyter) and print its output",
		Long: `Runs CODE (or standard input when CODE is "-") as one cell in the kernel,
which first moves to the shell's current directory. Images the cell
displays are listed as data: URLs with --json.`,
		Example: `  actionctl ipython 'print(1)'
  actionctl ipython --timeout 5m - < analysis.py`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			code, err := argOrStdin(args, 0)
			if err != nil {
				return err
			}
			act := &event.IPythonRunCell{Code: code, IncludeExtra: extra, ConfirmationState: "confirmed", SecurityRisk: event.RiskUnknown}
			if timeout > 0 {
				t := timeout.Seconds()
				act.Timeout = &t
			}
			obs, err := a.client().Execute(cmd.Context(), act)
			if err != nil {
				return err
			}
			_, ok := obs.(*event.IPythonOutput)
			if !ok {
				a.code = exitError
			}
			if a.json {
				return a.printJSON(obs)
			}
			if !ok {
				fmt.Fprintln(a.stderr, obs.Text())
				return nil
			}
			fmt.Fprintln(a.stdout, obs.Text())
			return nil
		},
	}
	c.Flags().DurationVar(&timeout, "timeout", 0, "interrupt the cell after this long (0: no limit)")
	c.Flags().BoolVar(&extra, "extra", false, "append the kernel's directory and interpreter, as agents see them")
	return c
}

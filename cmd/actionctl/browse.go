package main

import (
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/actionserver/actionserver/event"
)

const (
	pageBegin = "============== BEGIN webpage content ==============\n"
	pageEnd   = "\n============== END webpage content =============="
)

func (a *app) browseCmd() *cobra.Command {
	var shot string
	var timeout time.Duration
	c := &cobra.Command{
		Use:   "browse URL",
		Short: "Open a URL in the server's browser and print the page as Markdown",
		Example: `  actionctl browse http://localhost:3000/
  actionctl browse --shot page.png http://localhost:3000/`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			t := timeout.Seconds()
			obs, err := a.client().Execute(cmd.Context(), &event.BrowseURL{
				Header: event.Header{Timeout: &t}, URL: args[0], SecurityRisk: event.RiskUnknown})
			if err != nil {
				return err
			}
			b, ok := obs.(*event.BrowserOutput)
			if !ok {
				if a.json {
					a.code = exitError
					return a.printJSON(obs)
				}
				return fmt.Errorf("%s", obs.Text())
			}
			if shot != "" {
				png, err := dataURL(b.Screenshot)
				if err != nil {
					return fmt.Errorf("screenshot: %w", err)
				}
				if err := os.WriteFile(shot, png, 0o644); err != nil {
					return err
				}
			}
			if b.Error {
				a.code = exitError
			}
			if a.json {
				return a.printJSON(obs)
			}
			if b.Error {
				fmt.Fprintln(a.stderr, b.LastBrowserActionError)
			}
			page := b.Content
			if i := strings.Index(page, pageBegin); i >= 0 {
				page = page[i+len(pageBegin):]
				if j := strings.LastIndex(page, pageEnd); j >= 0 {
					page = page[:j]
				}
			}
			fmt.Fprintln(a.stdout, page)
			return nil
		},
	}
	c.Flags().StringVar(&shot, "shot", "", "also save the screenshot to this PNG file")
	c.Flags().DurationVar(&timeout, "timeout", 60*time.Second, "give the page this long")
	return c
}

func dataURL(u string) ([]byte, error) {
	_, b64, ok := strings.Cut(u, ";base64,")
	if !ok {
		return nil, errors.New("no screenshot in the observation")
	}
	return base64.StdEncoding.DecodeString(b64)
}

package executor

import (
	"context"
	"errors"

	"github.com/actionserver/actionserver/event"
	"github.com/actionserver/actionserver/plugins/jupyter"
)

// errNoJupyter is upstream's error for a cell without the jupyter plugin;
// the host shows it as is.
var errNoJupyter = errors.New("JupyterRequirement not found. Unable to run IPython action.")

// cellRunner is what run_ipython needs from the jupyter plugin.
type cellRunner interface {
	RunCell(ctx context.Context, c jupyter.Cell) (jupyter.Result, error)
}

// runIPython runs a cell in the kernel, which first follows the default
// shell's directory.
func (e *Executor) runIPython(ctx context.Context, a *event.IPythonRunCell) (event.Observation, error) {
	p, ok := e.opts.Plugins.Get(jupyter.Name)
	if !ok {
		return nil, errNoJupyter
	}
	runner, ok := p.(cellRunner)
	if !ok {
		return nil, errNoJupyter
	}
	res, err := runner.RunCell(ctx, jupyter.Cell{
		Code: a.Code, Cwd: e.cwd(ctx), Timeout: a.Timeout, IncludeExtra: a.IncludeExtra,
	})
	if err != nil {
		return nil, err
	}
	return &event.IPythonOutput{Content: res.Content, Code: a.Code, ImageURLs: res.ImageURLs}, nil
}

package gym

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBindArgs_FollowsPythonRules(t *testing.T) {
	params := []param{req("bid"), opt("button", "left"), opt("modifiers", List{})}
	tests := []struct {
		name    string
		call    Call
		want    map[string]any
		wantErr string
	}{
		{"defaults", Call{Name: "click", Args: []any{"1"}}, map[string]any{"bid": "1", "button": "left", "modifiers": List{}}, ""},
		{"keyword", Call{Name: "click", Args: []any{"1"}, Kwargs: []Kwarg{{"button", "right"}}}, map[string]any{"bid": "1", "button": "right", "modifiers": List{}}, ""},
		{"all by keyword", Call{Name: "click", Kwargs: []Kwarg{{"bid", "2"}}}, map[string]any{"bid": "2", "button": "left", "modifiers": List{}}, ""},
		{"missing", Call{Name: "click"}, nil, "TypeError: click() missing 1 required positional argument: 'bid'"},
		{"too many", Call{Name: "click", Args: []any{"1", "left", List{}, 4}}, nil, "TypeError: click() takes from 1 to 3 positional arguments but 4 were given"},
		{"unknown keyword", Call{Name: "click", Args: []any{"1"}, Kwargs: []Kwarg{{"x", 1}}}, nil, "TypeError: click() got an unexpected keyword argument 'x'"},
		{"twice", Call{Name: "click", Args: []any{"1"}, Kwargs: []Kwarg{{"bid", "2"}}}, nil, "TypeError: click() got multiple values for argument 'bid'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := bindArgs(tt.call, params)
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Equal(t, tt.wantErr, err.Error())
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}

	_, err := bindArgs(Call{Name: "fill"}, []param{req("bid"), req("value")})
	assert.EqualError(t, err, "TypeError: fill() missing 2 required positional arguments: 'bid' and 'value'")
	_, err = bindArgs(Call{Name: "scroll", Args: []any{1, 2, 3}}, []param{req("delta_x"), req("delta_y")})
	assert.EqualError(t, err, "TypeError: scroll() takes 2 positional arguments but 3 were given")
}

func TestRun_ReportsTheFirstFailureAsBrowserGym(t *testing.T) {
	tests := []struct {
		name      string
		program   string
		failOn    string
		want      string
		performed []string
	}{
		{"all succeed", "click('1')\nnoop()", "", "", []string{"click [1 left []]", "noop [1000]"}},
		{"syntax error", "click(", "", "SyntaxError: ", nil},
		{"empty", "  # nothing\n", "", "ValueError: Received an empty action.", nil},
		{"unknown action before any runs", "click('1'); explode()", "", "NameError: Invalid action type 'explode'.", nil},
		{"binding fails after a call ran", "click('1'); fill('2')", "", "TypeError: fill() missing 1 required positional argument: 'value'", []string{"click [1 left []]"}},
		{"action error stops the program", "goto('x'); go_back()", "goto", "ValueError: bad goto", []string{"goto [x]"}},
		{"foreign error", "hover('3')", "hover", "Error: boom", []string{"hover [3]"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var performed []string
			got, err := Run(context.Background(), tt.program, func(name string, args map[string]any) error {
				var vals []any
				for _, p := range actions()[name] {
					vals = append(vals, args[p.name])
				}
				performed = append(performed, fmt.Sprintf("%s %v", name, vals))
				switch {
				case name != tt.failOn:
					return nil
				case name == "goto":
					return Errorf("ValueError", "bad goto")
				default:
					return errors.New("boom")
				}
			})
			require.NoError(t, err)
			if strings.HasSuffix(tt.want, ": ") {
				assert.True(t, strings.HasPrefix(got, tt.want), got)
			} else {
				assert.Equal(t, tt.want, got)
			}
			assert.Equal(t, tt.performed, performed)
		})
	}
}

func TestRun_ErrorAfterTheContextEndedFailsTheStep(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	text, err := Run(ctx, "noop(10)", func(string, map[string]any) error { return ctx.Err() })
	assert.ErrorIs(t, err, context.Canceled)
	assert.Empty(t, text)
}

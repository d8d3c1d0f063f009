package server

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/actionserver/actionserver/api"
)

// TestOpenAPI_FileSchemasMatchTheGoTypes fails when a wire type of the
// file routes gains, loses or renames a field, or changes whether it is
// always sent, and the description does not follow.
func TestOpenAPI_FileSchemasMatchTheGoTypes(t *testing.T) {
	var doc struct {
		Components struct {
			Schemas map[string]struct {
				Required   []string                   `json:"required"`
				Properties map[string]json.RawMessage `json:"properties"`
			} `json:"schemas"`
		} `json:"components"`
	}
	require.NoError(t, json.Unmarshal(OpenAPISpec, &doc))
	types := map[string]any{
		"CodedError":    api.ErrorBody{},
		"FileInfo":      api.FileInfo{},
		"FileList":      api.FileList{},
		"FileWritten":   api.FileWritten{},
		"MkdirRequest":  api.MkdirRequest{},
		"MoveRequest":   api.MoveRequest{},
		"RemoveRequest": api.RemoveRequest{},
		"ChmodRequest":  api.ChmodRequest{},
		"WatchEvent":    api.WatchEvent{},
	}
	for name, v := range types {
		t.Run(name, func(t *testing.T) {
			schema, ok := doc.Components.Schemas[name]
			require.True(t, ok, "schema %s is described", name)
			var fields, always []string
			rt := reflect.TypeOf(v)
			for i := range rt.NumField() {
				tag := rt.Field(i).Tag.Get("json")
				field, opts, _ := strings.Cut(tag, ",")
				fields = append(fields, field)
				// A request's plain fields may be left out by a client; a
				// reply's are always sent.
				if !strings.Contains(opts, "omitempty") && !strings.HasSuffix(name, "Request") {
					always = append(always, field)
				}
			}
			var props []string
			for p := range schema.Properties {
				props = append(props, p)
			}
			slices.Sort(fields)
			slices.Sort(props)
			assert.Equal(t, fields, props, "properties")
			if !strings.HasSuffix(name, "Request") {
				req := slices.Clone(schema.Required)
				slices.Sort(req)
				slices.Sort(always)
				assert.Equal(t, always, req, "required")
			}
		})
	}
}

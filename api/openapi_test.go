package api

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// schemaTypes are the Go types of the described schemas.
var schemaTypes = map[string]any{
	"CodedError":           ErrorBody{},
	"CodedValidationError": ValidationErrorBody{},
	"OK":                   OK{},
	"SessionDeleted":       SessionDeleted{},
	"Session":              Session{},
	"CommandBrief":         CommandBrief{},
	"Command":              Command{},
	"CommandMeta":          CommandMeta{},
	"OutputChunk":          OutputChunk{},
	"OutputEvent":          OutputEvent{},
	"LostEvent":            LostEvent{},
	"TailEvent":            TailEvent{},
	"CreateSessionRequest": CreateSessionRequest{},
	"StartCommandRequest":  StartCommandRequest{},
	"InputRequest":         InputRequest{},
	"SignalRequest":        SignalRequest{},
	"ResizeRequest":        ResizeRequest{},
	"ClaimRequest":         ClaimRequest{},
	"ClaimResponse":        ClaimResponse{},
	"WatchEvent":           WatchEvent{},
	"FileInfo":             FileInfo{},
	"FileList":             FileList{},
	"FileWritten":          FileWritten{},
	"MkdirRequest":         MkdirRequest{},
	"MoveRequest":          MoveRequest{},
	"RemoveRequest":        RemoveRequest{},
	"ChmodRequest":         ChmodRequest{},
}

type node = map[string]any

func loadSpec(t *testing.T) node {
	t.Helper()
	var doc node
	require.NoError(t, json.Unmarshal(OpenAPI, &doc))
	return doc
}

// lookup follows a local $ref ("#/components/...").
func lookup(t *testing.T, doc node, ref string) node {
	t.Helper()
	var cur any = doc
	for _, part := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
		m, ok := cur.(node)
		require.True(t, ok, "%s does not resolve", ref)
		cur, ok = m[part]
		require.True(t, ok, "%s does not resolve", ref)
	}
	m, ok := cur.(node)
	require.True(t, ok, "%s is not an object", ref)
	return m
}

// nativePath reports whether a described path belongs to the native API.
func nativePath(p string) bool {
	return p == "/sessions" || strings.HasPrefix(p, "/sessions/") || strings.HasPrefix(p, "/files/") ||
		p == "/watch" || p == "/claim"
}

// TestOpenAPI_NativeRoutesUseNamedSchemas: every JSON body a native route
// takes or answers is a named schema with a Go type, so that
// TestOpenAPI_SchemasMatchTheGoTypes checks it; an inline object would
// escape that check.
func TestOpenAPI_NativeRoutesUseNamedSchemas(t *testing.T) {
	doc := loadSpec(t)
	checked := 0
	for path, ops := range doc["paths"].(node) {
		if !nativePath(path) {
			continue
		}
		for method, op := range ops.(node) {
			if method == "parameters" {
				continue
			}
			bodies := map[string]node{}
			if rb, ok := op.(node)["requestBody"].(node); ok {
				bodies["request"] = rb
			}
			for status, r := range op.(node)["responses"].(node) {
				r := r.(node)
				if ref, ok := r["$ref"].(string); ok {
					r = lookup(t, doc, ref)
				}
				bodies[status] = r
			}
			for where, b := range bodies {
				content, _ := b["content"].(node)
				js, ok := content["application/json"].(node)
				if !ok {
					continue // no body, a stream, or bytes
				}
				name := strings.ToUpper(method) + " " + path + " " + where
				schema, _ := js["schema"].(node)
				require.NotNil(t, schema, name)
				if schema["type"] == "array" {
					schema, _ = schema["items"].(node)
				}
				ref, _ := schema["$ref"].(string)
				typeName, isSchema := strings.CutPrefix(ref, "#/components/schemas/")
				if assert.True(t, isSchema, "%s: an inline schema; name it after its Go type", name) {
					_, known := schemaTypes[typeName]
					assert.True(t, known, "%s: schema %s has no Go type in schemaTypes", name, typeName)
					checked++
				}
			}
		}
	}
	assert.Greater(t, checked, 40, "the native routes' bodies were found")
}

// TestOpenAPI_SchemasMatchTheGoTypes fails when a wire type gains, loses
// or renames a field, changes a field's JSON type, or changes whether it
// is always sent, and the description does not follow. Nested objects are
// checked against their field's type.
func TestOpenAPI_SchemasMatchTheGoTypes(t *testing.T) {
	doc := loadSpec(t)
	schemas := doc["components"].(node)["schemas"].(node)
	for name, v := range schemaTypes {
		t.Run(name, func(t *testing.T) {
			schema, ok := schemas[name].(node)
			require.True(t, ok, "schema %s is described", name)
			checkSchema(t, doc, name, schema, reflect.TypeOf(v), strings.HasSuffix(name, "Request"))
		})
	}
}

var timeType = reflect.TypeFor[time.Time]()

// jsonType is the JSON type a Go type encodes as.
func jsonType(rt reflect.Type) string {
	switch {
	case rt == timeType, rt.Kind() == reflect.String:
		return "string"
	case rt.Kind() == reflect.Struct, rt.Kind() == reflect.Map:
		return "object"
	case rt.Kind() == reflect.Slice:
		return "array"
	case rt.Kind() == reflect.Bool:
		return "boolean"
	case rt.Kind() >= reflect.Int && rt.Kind() <= reflect.Uint64:
		return "integer"
	}
	return ""
}

// checkSchema compares one schema with a Go type. A request's plain
// fields may be left out by a client; a reply's are always sent, so they
// must be required, and only pointers may be null.
func checkSchema(t *testing.T, doc node, at string, schema node, rt reflect.Type, request bool) {
	t.Helper()
	if ref, ok := schema["$ref"].(string); ok {
		schema = lookup(t, doc, ref)
	}
	if alts, ok := schema["oneOf"].([]any); ok {
		// {"oneOf": [X, {"type": "null"}]} describes a pointer.
		assert.Equal(t, reflect.Pointer, rt.Kind(), "%s: only a pointer may be null", at)
		for _, a := range alts {
			if a.(node)["type"] != "null" {
				checkSchema(t, doc, at, a.(node), rt, request)
			}
		}
		return
	}
	nullable := false
	for rt.Kind() == reflect.Pointer {
		rt, nullable = rt.Elem(), true
	}
	want := jsonType(rt)
	require.NotEmpty(t, want, "%s: no JSON type for %s", at, rt)
	var types []string
	switch ty := schema["type"].(type) {
	case string:
		types = append(types, ty)
	case []any:
		for _, x := range ty {
			types = append(types, x.(string))
		}
	}
	if assert.NotEmpty(t, types, "%s: no type", at) {
		assert.Contains(t, types, want, "%s: the JSON type of %s", at, rt)
		if !request && !nullable {
			assert.NotContains(t, types, "null", "%s: %s is never null", at, rt)
		}
	}
	switch {
	case rt == timeType:
		assert.Equal(t, "date-time", schema["format"], "%s: a time", at)
	case rt.Kind() == reflect.Slice:
		items, ok := schema["items"].(node)
		if assert.True(t, ok, "%s: items", at) {
			checkSchema(t, doc, at+"[]", items, rt.Elem(), request)
		}
	case rt.Kind() == reflect.Struct:
		checkFields(t, doc, at, schema, rt, request)
	}
}

// checkFields compares an object schema's properties with a struct's
// fields.
func checkFields(t *testing.T, doc node, at string, schema node, rt reflect.Type, request bool) {
	t.Helper()
	props, _ := schema["properties"].(node)
	var fields, always, described, required []string
	for i := range rt.NumField() {
		f := rt.Field(i)
		field, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if field == "-" || !f.IsExported() {
			continue
		}
		fields = append(fields, field)
		if !strings.Contains(opts, "omitempty") {
			always = append(always, field)
		}
		if p, ok := props[field].(node); ok {
			checkSchema(t, doc, at+"."+field, p, f.Type, request)
		}
	}
	for p := range props {
		described = append(described, p)
	}
	req, _ := schema["required"].([]any)
	for _, r := range req {
		required = append(required, r.(string))
	}
	slices.Sort(fields)
	slices.Sort(described)
	assert.Equal(t, fields, described, "%s: properties", at)
	if !request {
		slices.Sort(always)
		slices.Sort(required)
		assert.Equal(t, always, required, "%s: required", at)
	}
}

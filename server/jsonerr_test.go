package server

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestDescribeJSON_TheClientsTermsNotGos(t *testing.T) {
	var v struct {
		Rows    uint16            `json:"rows"`
		Timeout *float64          `json:"timeout"`
		Name    string            `json:"name"`
		Args    []string          `json:"args"`
		Env     map[string]string `json:"env"`
		Count   int8              `json:"count"`
		Flag    bool              `json:"flag"`
	}
	for body, want := range map[string]string{
		`{"rows": 70000}`:    `field "rows" must be an integer from 0 to 65535, not 70000`,
		`{"rows": 1.5}`:      `field "rows" must be an integer from 0 to 65535, not 1.5`,
		`{"timeout": 1e400}`: `field "timeout" must be a number, not 1e400 (out of range)`,
		`{"timeout": "x"}`:   `field "timeout" must be a number, not string`,
		`{"name": 5}`:        `field "name" must be a string, not number`,
		`{"args": "a"}`:      `field "args" must be a list, not string`,
		`{"env": []}`:        `field "env" must be an object, not array`,
		`{"count": -200}`:    `field "count" must be an integer from -128 to 127, not -200`,
		`{"flag": "yes"}`:    `field "flag" must be true or false, not string`,
		`[1]`:                `expected an object, not array`,
		`{"name": "a"`:       `not valid JSON at byte 12 (unexpected end of JSON input)`,
		`{"name": }`:         `not valid JSON at byte 10 (invalid character '}' looking for beginning of value)`,
	} {
		err := json.Unmarshal([]byte(body), &v)
		if assert.Error(t, err, body) {
			got := describeJSON(err)
			assert.Equal(t, want, got, body)
			assert.NotContains(t, got, "Go ")
			assert.NotContains(t, got, "json:")
		}
	}
}

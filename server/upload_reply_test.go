package server

import (
	"bytes"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestUpload_ReplyHasUpstreamsKeyOrder(t *testing.T) {
	// Byte for byte what upstream answers: filename, destination, recursive.
	_, base := newTestServer(t, true, nil)
	dest := t.TempDir()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, err := mw.CreateFormFile("file", "a.txt")
	require.NoError(t, err)
	_, err = fw.Write([]byte("a"))
	require.NoError(t, err)
	require.NoError(t, mw.Close())
	q := url.Values{"destination": {dest}, "recursive": {"false"}}
	resp, err := http.Post(base+"/upload_file?"+q.Encode(), mw.FormDataContentType(), &body)
	require.NoError(t, err)
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(got))
	assert.Equal(t, `{"filename":"a.txt","destination":"`+dest+`","recursive":false}`, string(got))
}

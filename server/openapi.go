package server

import (
	_ "embed"
	"net/http"

	"github.com/gin-gonic/gin"
)

// OpenAPISpec is the OpenAPI 3.1 description of every route, served at
// /openapi.json. A test keeps it and the router in agreement.
//
//go:embed openapi.json
var OpenAPISpec []byte

func (s *Server) openAPI(c *gin.Context) {
	c.Data(http.StatusOK, "application/json", OpenAPISpec)
}

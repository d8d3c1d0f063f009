package server

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/actionserver/actionserver/api"
)

func (s *Server) openAPI(c *gin.Context) {
	c.Data(http.StatusOK, "application/json", api.OpenAPI)
}

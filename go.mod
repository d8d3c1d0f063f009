module github.com/actionserver/actionserver

go 1.24.0

require (
	github.com/fsnotify/fsnotify v1.10.1
	github.com/pmezard/go-difflib v1.0.0
	github.com/stretchr/testify v1.11.1
	github.com/wlynxg/chardet v1.0.5
	golang.org/x/sys v0.13.0
	golang.org/x/text v0.30.0
)

require (
	github.com/davecgh/go-spew v1.1.1 // indirect
	gopkg.in/yaml.v3 v3.0.1 // indirect
)

module github.com/actionserver/actionserver

go 1.24.0

require (
	github.com/fsnotify/fsnotify v1.10.1 // indirect
	github.com/pmezard/go-difflib v1.0.0 // indirect
	github.com/stretchr/testify v1.11.1 // indirect
	github.com/wlynxg/chardet v1.0.5 // indirect
	golang.org/x/sys v0.13.0 // indirect
	golang.org/x/text v0.30.0 // indirect
)

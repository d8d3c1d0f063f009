module github.com/actionserver/actionserver

go 1.24

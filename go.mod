module github.com/actionserver/actionserver

go 1.25.0

require (
	github.com/JohannesKaufmann/html-to-markdown/v2 v2.5.2
	github.com/chromedp/cdproto v0.159.0
	github.com/chromedp/chromedp v0.23.0
	github.com/gabriel-vasile/mimetype v1.4.12
	github.com/stretchr/testify v1.12.1
	golang.org/x/net v0.55.0
)

require (
	github.com/JohannesKaufmann/dom v0.3.1 // indirect
	github.com/go-json-experiment/json v0.0.0-20260213210345-44df1a37e875 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
)

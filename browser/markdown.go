package browser

import (
	"strings"

	"github.com/JohannesKaufmann/html-to-markdown/v2/converter"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/base"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/commonmark"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/table"
)

// newMarkdownConverter is configured like OpenHands' html2text: links kept,
// images dropped, no line wrapping, "*" bullets and "_" emphasis.
func newMarkdownConverter() *converter.Converter {
	conv := converter.NewConverter(converter.WithPlugins(
		base.NewBasePlugin(),
		commonmark.NewCommonmarkPlugin(
			commonmark.WithBulletListMarker("*"),
			commonmark.WithEmDelimiter("_"),
			commonmark.WithStrongDelimiter("**"),
		),
		table.NewTablePlugin(),
	))
	conv.Register.TagType("img", converter.TagTypeRemove, converter.PriorityEarly)
	return conv
}

// markdown renders the page of a snapshot as Markdown.
func markdown(snap *pageSnapshot) string {
	out, err := newMarkdownConverter().ConvertNode(snap.htmlDocument())
	if err != nil {
		return ""
	}
	return strings.TrimRight(string(out), "\n")
}

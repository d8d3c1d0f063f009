package browser

import _ "embed"

// markJS marks elements with bids; see js/mark.js.
//
//go:embed js/mark.js
var markJS string

// findJS looks an element up by bid; see js/find.js.
//
//go:embed js/find.js
var findJS string

package api

// ClaimRequest is the body of POST /claim, which hands a sandbox booted
// unclaimed (late binding) to its owner, or rotates the owner's key.
type ClaimRequest struct {
	// APIKey becomes the session API key every keyed route requires; the
	// previous key, if any, is refused from the moment the claim returns.
	APIKey string `json:"api_key"`
	// Env is set in the default shell and in every session started later.
	Env map[string]string `json:"env,omitempty"`
	// WorkingDir, when set, is where the default shell moves to and where
	// later sessions start; it must be an existing directory.
	WorkingDir string `json:"working_dir,omitempty"`
}

// ClaimResponse answers a claim.
type ClaimResponse struct {
	// Rotated is true when the sandbox was already claimed and this claim
	// replaced its key.
	Rotated bool `json:"rotated"`
}

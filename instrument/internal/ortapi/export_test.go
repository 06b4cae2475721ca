package ortapi

const API24Entries = api24Entries

const (
	IdxGetAvailableProviders     = idxGetAvailableProviders
	IdxReleaseAvailableProviders = idxReleaseAvailableProviders
)

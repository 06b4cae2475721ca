package ortapi

const API24Entries = api24Entries
